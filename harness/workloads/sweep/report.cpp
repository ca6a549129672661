// The prompt sweep in the report layer: the report's own sections (conditions, effects, prefix
// reuse) are the sweep's, so it adds no section of its own.

#include "harness/report/workload_section.h"
#include "harness/workloads/sweep/spec.h"

namespace kvbench::workloads {

report::WorkloadSection report_section(const Sweep& /*w*/, const scenario::Scenario& /*s*/,
                                       const results::RunManifest& /*run*/,
                                       const std::vector<CallRecord>& /*calls*/) {
  report::WorkloadSection out;
  out.key = Sweep::kName;
  return out;
}

}  // namespace kvbench::workloads
