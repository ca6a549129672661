#pragma once
// What a scenario sends, as the CallSource that sends it: its workload's (workloads/workload.h).

#include <memory>
#include <string>

#include "harness/run/call_source.h"

namespace kvbench::run {

// The source of the scenario's workload, for the run `run_id` (every record and first line
// carries it); `wall_clock` dates what prompts date.
std::unique_ptr<CallSource> make_source(const scenario::Scenario& s, const Clock& wall_clock,
                                        const std::string& run_id);

}  // namespace kvbench::run
