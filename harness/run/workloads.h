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

// The scenario's workload can be split over hosts: it replays a fixed list of requests (a trace)
// and defines shard().
bool sharded(const scenario::Scenario& s);

// Keeps shard `index` of `count` of the scenario's workload (--trace-shard K/N), which must be
// sharded(); InputError for a shard out of range.
void shard(scenario::Scenario& s, int index, int count);

}  // namespace kvbench::run
