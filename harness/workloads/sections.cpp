// The report layer's side of the table of workloads (workload.h), compiled into the report
// module.

#include <variant>

#include "harness/report/workload_section.h"
#include "harness/scenario/parse_detail.h"
#include "harness/workloads/scenario_workload.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

// The run's scenario as its run.json records it, its workload and server read as a scenario file
// gives them (the scenario's own parse_workload, the workload's parse, parse_server) but without
// the files they name: a report reads the run's files only. The workload is the first, the sweep,
// where the record names none; a setting that does not parse keeps its default, as one an
// earlier version did not record.
scenario::Scenario recorded(const json& scenario) {
  scenario::Scenario s;
  if (scenario.is_object()) {
    scenario::detail::Checker c("run.json", "");
    c.skip_files();
    scenario::detail::parse_workload(c, scenario, s);
    if (scenario.contains("server")) {
      scenario::detail::parse_server(c, scenario["server"], "server", s.server);
    }
  }
  return s;
}

}  // namespace

WorkloadSection workload_section(const results::RunManifest& run,
                                 const std::vector<CallRecord>& calls) {
  const scenario::Scenario s = recorded(run.scenario);
  return std::visit([&](const auto& w) { return report_section(w, s, run, calls); },
                    workloads::of(s));
}

}  // namespace kvbench::report
