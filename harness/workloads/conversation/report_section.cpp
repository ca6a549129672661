// The conversation workload in the report layer: its section, made once from the run's turns.

#include <sstream>

#include "harness/report/workload_section.h"
#include "harness/workloads/conversation/report.h"
#include "harness/workloads/conversation/spec.h"

namespace kvbench::workloads {

report::WorkloadSection report_section(const Conversation& /*w*/, const results::RunManifest& run,
                                       const std::vector<CallRecord>& calls) {
  const report::ConversationReport r = report::conversation_report(run, calls);
  report::WorkloadSection out{std::string(Conversation::kName), r.present, {}, {}};
  if (r.present) {
    std::ostringstream md;
    report::write_conversation_markdown(md, r);
    out.markdown = md.str();
    out.json = report::to_json(r);
  }
  return out;
}

}  // namespace kvbench::workloads
