#include "harness/workloads/conversation/record.h"

#include "harness/results/record_parts.h"

namespace kvbench::workloads {

namespace {

using describe::of;
using TR = TurnRecord;

}  // namespace

const std::vector<describe::Field<TurnRecord>>& TurnRecord::fields() {
  static const std::vector<describe::Field<TR>> kFields = {
      of<TR>("conversation", &TR::conversation).column("conversation").min(0).require(),
      of<TR>("turn", &TR::turn).column("turn").min(1).require(),
      of<TR>("conversations", &TR::conversations).column("conversations").min(1).require(),
      of<TR>("reuse", &TR::reuse).column("reuse").on_off().require(),
      of<TR>("history_tokens", &TR::history_tokens).column("history_tokens", "tokens").min(0),
      of<TR>("wait_ms", &TR::wait_ms).column("wait_ms", "ms"),
      of<TR>("set", &TR::set).min(0).require(),
      of<TR>("slot", &TR::slot).min(0),
      of<TR>("history_basis", &TR::history_basis)
          .one_of({"", "ids", "count", "reported"})
          .omit_empty(),
      of<TR>("history_floor", &TR::history_floor).min(0),
      of<TR>("answer", &TR::answer),
  };
  return kFields;
}

results::RecordPartInfo part_of_record(const Conversation& /*w*/) {
  return results::part_info(TurnRecord::fields());
}

}  // namespace kvbench::workloads
