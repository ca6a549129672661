#pragma once
// A workload's section of a run's report, made once from the run's files by the workload's own
// folder (its report*.cpp defines report_section, declared for every workload in
// workloads/layers.h): the report reaches it through std::visit over workloads::Workload, as the
// other layers do, and prints what it made.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/results/manifest.h"
#include "harness/workloads/workload.h"

namespace kvbench::report {

struct WorkloadSection {
  std::string key;       // the workload's name: its key in summary.json
  bool present = false;  // the run has something of it to say
  std::string markdown;  // printed where the report's layout puts the workload
  nlohmann::json json;
};

// The workload a run ran, by the name its resolved scenario records (a top-level key, as
// run.json writes a conversation, or under "workload"); the first, the sweep, when none. Its
// settings are left at their defaults: each workload's report reads them from run.json.
workloads::Workload workload_of(const nlohmann::json& scenario);

// The run's workload's section (report_section of that workload).
WorkloadSection workload_section(const results::RunManifest& run,
                                 const std::vector<CallRecord>& calls);

}  // namespace kvbench::report
