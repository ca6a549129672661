// The report layer's side of the table of workloads (workload.h), compiled into the report
// module.

#include <variant>

#include "harness/report/workload_section.h"
#include "harness/workloads/scenario_workload.h"

namespace kvbench::report {

WorkloadSection workload_section(const scenario::Scenario& s, const results::RunManifest& run,
                                 const std::vector<CallRecord>& calls) {
  return std::visit([&](const auto& w) { return report_section(w, s, run, calls); },
                    workloads::of(s));
}

}  // namespace kvbench::report
