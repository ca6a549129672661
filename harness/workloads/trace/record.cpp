#include "harness/workloads/trace/record.h"

#include "harness/results/record_parts.h"

namespace kvbench::workloads {

namespace {

using describe::of;
using RR = ReplayRecord;

}  // namespace

const std::vector<describe::Field<ReplayRecord>>& ReplayRecord::fields() {
  static const std::vector<describe::Field<RR>> kFields = {
      of<RR>("index", &RR::index).column("trace_index").min(0).require(),
      of<RR>("due_ms", &RR::due_ms).column("trace_due_ms", "ms").min(0).require(),
      of<RR>("sent_ms", &RR::sent_ms).column("trace_sent_ms", "ms"),
      of<RR>("predicted_infinite_tokens", &RR::infinite_tokens)
          .column("predicted_infinite_tokens", "tokens")
          .min(0)
          .require(),
      of<RR>("predicted_tokens", &RR::predicted_tokens).column("predicted_tokens", "tokens").min(0),
      of<RR>("loss", &RR::loss)
          .column("loss")
          .one_of({"capacity", "placement"})
          .null_empty()
          .require(),
      of<RR>("mismatch", &RR::mismatch)
          .column("mismatch")
          .one_of({"materialization", "evicted", "over_report", "unexplained"})
          .null_empty()
          .require(),
      of<RR>("input_tokens", &RR::input_tokens).min(1).require(),
      of<RR>("output_tokens", &RR::output_tokens).min(0),
      of<RR>("blocks", &RR::blocks).min(0).require(),
      of<RR>("block_tokens", &RR::block_tokens).min(1).require(),
      of<RR>("predicted_infinite_blocks", &RR::infinite_blocks).min(0),
      of<RR>("predicted_slot", &RR::predicted_slot).min(0),
      of<RR>("working_set_blocks", &RR::working_set_blocks).min(0),
      of<RR>("lead_tokens", &RR::lead_tokens).min(1).omit_empty(),
      of<RR>("materialized", &RR::materialized),
      of<RR>("predicted_from", &RR::predicted_from).one_of({"", "slot", "host_cache", "blocks"}),
  };
  return kFields;
}

results::RecordPartInfo part_of_record(const TraceReplay& /*w*/) {
  return results::part_info(ReplayRecord::fields());
}

}  // namespace kvbench::workloads
