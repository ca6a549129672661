// The trace workload in the report layer: its section, made from the run's replayed requests.

#include "harness/report/workload_section.h"
#include "harness/workloads/trace/report_trace.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::workloads {

report::WorkloadSection report_section(const TraceReplay& w, const results::RunManifest& run,
                                       const std::vector<CallRecord>& calls) {
  return report::trace_section(w, run, calls);
}

}  // namespace kvbench::workloads
