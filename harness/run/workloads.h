#pragma once
// The table of workloads: what a scenario sends, as the CallSource that sends it. A new workload
// is a source and one line here.

#include <memory>
#include <string>

#include "harness/run/call_source.h"

namespace kvbench::run {

// The source of the scenario's workload, for the run `run_id` (every record and first line
// carries it); `wall_clock` dates what prompts date.
std::unique_ptr<CallSource> make_source(const scenario::Scenario& s, const Clock& wall_clock,
                                        const std::string& run_id);

}  // namespace kvbench::run
