#pragma once
// A history as JSON lines, for moving sessions between stores: one line per session, with its
// facts, host fingerprint, values and every call record. `kvbench history export` writes them,
// `kvbench history import` reads them back (each line checked before anything is written).

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/history/store.h"

namespace kvbench::history {

inline constexpr const char* kExportSchema = "kvbench.history-session";
inline constexpr int kExportVersion = 1;

nlohmann::json to_export_line(const Session& s);

// One exported line back. Throws InputError naming `where` (file:line) and the field when it is
// not a session line of a known version, or its calls do not match their digest.
Session from_export_line(const nlohmann::json& line, const std::string& where);

// Every line of an export (blank lines skipped), checked; `name` is the file's name for errors.
std::vector<Session> read_export(std::istream& in, const std::string& name);

// What ingest checks before it writes: the run finished, its scenario matches its hash, its host
// is known. Throws InputError naming the run folder's run.json and what is wrong.
void check_ingestible(const session::RunInputs& run);

}  // namespace kvbench::history
