// The trace workload in the report layer: its section, made from the run's replayed requests.

#include "harness/report/workload_section.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/trace/report_trace.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::workloads {

report::WorkloadSection report_section(const TraceReplay& w, const scenario::Scenario& s,
                                       const results::RunManifest& /*run*/,
                                       const std::vector<CallRecord>& calls) {
  return report::trace_section(w, s.server, calls);
}

}  // namespace kvbench::workloads
