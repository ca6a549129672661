#pragma once
// The prefix-reuse sections of a run's report, and their JSON: printers of analysis::PrefixReport
// (the pair table and verdict, the checks, "put what changes last", the repeated-prompt trap).

#include <ostream>

#include <nlohmann/json.hpp>

#include "harness/analysis/prefix.h"

namespace kvbench::report {

using analysis::PrefixReport;

// Markdown sections for a run: the prefix-reuse table and verdict when the run has pairs, the
// "put what changes last" line when it has both timestamp positions, and the trap line when any
// timed call was served from the cache. Writes nothing for a run with none of these.
void write_prefix_markdown(std::ostream& out, const PrefixReport& report);

// The same as JSON: {"pairs": [...], "positions": [...], "verdict": ..., "trap": [...]}.
nlohmann::json prefix_to_json(const PrefixReport& report);

}  // namespace kvbench::report
