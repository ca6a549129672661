#pragma once
// Where kvbench's own files are: beside an installed binary (<prefix>/bin/kvbench reads
// <prefix>/share/kvbench), in the source tree a build folder sits in, or in the source tree it was
// built from; and the bundled scenarios by name (`kvbench run quickstart`).

#include <filesystem>
#include <string>
#include <vector>

namespace kvbench::cli {

// The folders searched for `scenarios/`, `scripts/` and the like, in order: <exe>/../share/kvbench,
// the folder above the binary's folder (a build folder in the source tree), the binary's folder,
// and the source tree it was built from.
std::vector<std::filesystem::path> data_roots();

// The first data root holding `relative`; empty when none does.
std::filesystem::path find_data_file(const std::filesystem::path& relative);

// A scenario argument as given when it names a file (or "-"); otherwise, when it is a bare name
// ("quickstart", "conversation.json"), the bundled scenarios/<name>.json if one exists; else as
// given (loading it then says the file does not exist).
std::string scenario_argument(const std::string& arg);

// The bundled scenarios' names (scenarios/*.json of the first root that has them), sorted.
std::vector<std::string> bundled_scenarios();

}  // namespace kvbench::cli
