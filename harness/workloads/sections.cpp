// The report layer's side of the table of workloads (workload.h), compiled into the report
// module.

#include <variant>

#include "harness/report/workload_section.h"
#include "harness/scenario/parse_detail.h"
#include "harness/workloads/workload.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

// The workload a run ran, with its settings as its resolved scenario records them, read as a
// scenario file gives them (the scenario's own parse_workload and the workload's parse) but
// without the files they name: a report reads the run's files only. The first, the sweep, where
// the record names none; a setting that does not parse keeps its default, as one an earlier
// version did not record.
workloads::Workload recorded(const json& scenario) {
  scenario::Scenario s;
  if (scenario.is_object()) {
    scenario::detail::Checker c("run.json", "");
    c.skip_files();
    scenario::detail::parse_workload(c, scenario, s);
  }
  return workloads::of(s);
}

}  // namespace

WorkloadSection workload_section(const results::RunManifest& run,
                                 const std::vector<CallRecord>& calls) {
  return std::visit([&](const auto& w) { return report_section(w, run, calls); },
                    recorded(run.scenario));
}

}  // namespace kvbench::report
