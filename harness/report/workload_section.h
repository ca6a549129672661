#pragma once
// A workload's section of a run's report, made once from the run's files by the workload's own
// folder (its report*.cpp defines report_section, declared for every workload in
// workloads/layers.h): the report reaches it through the table of workloads, as the other layers
// do, and prints, draws and writes what it made without knowing which workload made it.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/report/plot.h"
#include "harness/results/manifest.h"
#include "harness/scenario/scenario.h"

namespace kvbench::report {

struct WorkloadSection {
  std::string key;       // the workload's name: its key in summary.json
  bool present = false;  // the run has something of it to say
  std::string markdown;  // printed where the report's layout puts the workload
  nlohmann::json json;
  std::vector<Plot> plots;  // drawn on the page after the report's own
  // What the first screen's proof adds, one clause each ("12 of 12 conversation turns reused
  // their history exactly as predicted").
  std::vector<std::string> proof;
  // The workload keeps its server for all its calls, one start per setting (its point is the
  // server's cache across them): the first screen says so where no effect was estimated.
  bool keeps_its_server = false;
};

// The run's workload's section (report_section of that workload, given the run's scenario as
// run.json records it, typed), reached through the table of workloads (defined with it, in
// workloads/sections.cpp).
WorkloadSection workload_section(const scenario::Scenario& s, const results::RunManifest& run,
                                 const std::vector<CallRecord>& calls);

}  // namespace kvbench::report
