#pragma once
// The run folder: run.json (what ran, where, on what), calls.jsonl (one record per call,
// appended and flushed to disk call by call) and the server logs.

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/results/answer_record.h"
#include "harness/results/manifest.h"

namespace kvbench::results {

// Checks, creating nothing, that run folders can be made under `results_root`: the folder, or
// where it does not exist yet its nearest existing parent, is a folder in which a file can be
// created (a probe file is made and removed, so read-only mounts and permissions both count).
// Throws InputError ("<what> <path>: not writable: ...") otherwise. `what` names the option.
void check_writable_folder(const std::filesystem::path& results_root, const std::string& what);

// Creates results_root/<UTC yyyymmdd-hhmmss>-<name>, with a numeric suffix when it exists.
std::filesystem::path create_run_dir(const std::filesystem::path& results_root,
                                     const std::string& scenario_name);

// Writes JSON to `path` atomically (AtomicFileWriter: temporary file, checked fsync, rename).
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j);

// Appends records to calls.jsonl (or any JSON lines to answers.jsonl); each line is written whole
// and synced before append() returns. A line that cannot be written whole (the disk is full, an
// I/O error) is cut off again, so the file ends with the last complete record, and append()
// throws Error naming the file and the error.
class RecordWriter {
 public:
  explicit RecordWriter(const std::filesystem::path& path);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;
  void append(const CallRecord& r);
  void append_json(const nlohmann::json& line);

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// Cuts a last line that does not end in a newline (a record cut short by a crash or power
// loss) off `path`; returns whether it cut anything.
bool cut_partial_last_line(const std::filesystem::path& path);

struct LoadedRun {
  RunManifest run;  // run.json
  std::vector<CallRecord> calls;
  std::vector<AnswerRecord> answers;  // answers.jsonl, where the scenario asked for answers
  std::vector<std::string> warnings;  // e.g. a truncated last line
};

// Reads a run folder. A truncated or malformed line is skipped with a warning; a missing
// run.json or calls.jsonl is an InputError.
LoadedRun load_run(const std::filesystem::path& run_dir);

// A run folder's run.json alone; InputError when it is missing or no JSON.
RunManifest load_manifest(const std::filesystem::path& run_dir);

// Writes `run` as the run folder's run.json, atomically: the one writer of run.json.
void save_manifest(const std::filesystem::path& run_dir, const RunManifest& run);

// Reads run.json, lets `change` edit it, and writes it back (save_manifest).
void update_manifest(const std::filesystem::path& run_dir,
                     const std::function<void(RunManifest&)>& change);

}  // namespace kvbench::results
