#pragma once
// The names a workload's spec.h needs to declare its part in each layer, without depending on
// those layers.
//
// What every workload provides, one function per layer, each defined in the workload's folder and
// reached through std::visit over workloads::Workload (found by argument-dependent lookup).
//   scenario: parse(checker, value, path, spec) reads its settings at `path`;
//             check(checker, scenario, spec) applies its rules once the scenario parsed;
//             add_to_json(spec, resolved) writes what run.json records of it.
//   plan:     slot_levels(scenario, spec) gives the server slot levels (-np) it runs at;
//             fill_block(block, scenario, spec, rng) appends a block's calls.
//   run:      make_source(scenario, spec, wall_clock, run_id) is the CallSource that sends them.
//   results:  part_of_record(spec) describes its part of a call record, what its calls' records
//             carry (results/record_parts.h); a workload whose calls carry none gives an empty one.
//   report:   report_section(spec, scenario, run, calls) is its section of a run's report, from
//             the run's scenario as run.json records it (its workload and server read back) and its
//             files (report/workload_section.h).

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "harness/core/random.h"

namespace kvbench {
class Clock;
struct CallRecord;
}  // namespace kvbench
namespace kvbench::scenario {
struct Scenario;
}  // namespace kvbench::scenario
namespace kvbench::scenario::detail {
class Checker;
}  // namespace kvbench::scenario::detail
namespace kvbench::plan {
struct Block;
}  // namespace kvbench::plan
namespace kvbench::run {
class CallSource;
}  // namespace kvbench::run
namespace kvbench::results {
struct RunManifest;
struct RecordPartInfo;
}  // namespace kvbench::results
namespace kvbench::report {
struct WorkloadSection;
}  // namespace kvbench::report

// Declares workload W's part in each layer (above), in namespace kvbench::workloads; W's folder
// defines them.
#define KVBENCH_WORKLOAD_LAYERS(W)                                                           \
  void parse(scenario::detail::Checker& c, const nlohmann::json& v, const std::string& path, \
             W& w);                                                                          \
  void check(scenario::detail::Checker& c, const scenario::Scenario& s, const W& w);         \
  void add_to_json(const W& w, nlohmann::json& resolved);                                    \
  std::vector<int> slot_levels(const scenario::Scenario& s, const W& w);                     \
  void fill_block(plan::Block& b, const scenario::Scenario& s, const W& w, Rng& rng);        \
  std::unique_ptr<run::CallSource> make_source(const scenario::Scenario& s, const W& w,      \
                                               const Clock& wall_clock,                      \
                                               const std::string& run_id);                   \
  results::RecordPartInfo part_of_record(const W& w);                                        \
  report::WorkloadSection report_section(const W& w, const scenario::Scenario& s,            \
                                         const results::RunManifest& run,                    \
                                         const std::vector<CallRecord>& calls);
