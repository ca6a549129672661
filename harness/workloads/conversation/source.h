#pragma once
// Conversations as a CallSource (the conversation workload): each turn's request built from the
// conversation's history with the answers the server actually gave, held back for its think
// time, sent in its conversation's lane, and its reuse predicted from its history and from what
// its pinned slot holds (source_turns.h). Calls that are no turn (warm-ups) are the
// sweep's.

#include <optional>
#include <string>
#include <vector>

#include "harness/run/call_source.h"
#include "harness/workloads/conversation/source_turns.h"
#include "harness/workloads/sweep/source.h"

namespace kvbench::run {

class ConversationSource final : public CallSource {
 public:
  ConversationSource(const scenario::Scenario& s, const workloads::Conversation& conv,
                     const Clock& wall_clock, std::string run_id);

  void restore(const std::vector<CallRecord>& recorded) override;
  void reset(const plan::Block& block, backend::Backend& be,
             const std::vector<int>& slot0) override;
  CallRecord unsent(const plan::PlannedCall& call, const plan::Block& block) const override;
  PreparedCall prepare(const plan::PlannedCall& call) override;
  std::optional<int> lane(const plan::PlannedCall& call) const override;
  std::optional<Together> together(const plan::Block& block, std::size_t from) const override;
  double wait_s(const plan::PlannedCall& call, Nanos now) const override;
  // A turn's wait from when it was due (its answer and think time) to its send.
  void waited(CallRecord& r, double ms) const override;
  void expect(PreparedCall& p, std::optional<int> slot) override;
  void finish(PreparedCall& p, backend::CallResult res) override;

 private:
  const workloads::Conversation& conv_;
  SweepSource sweep_;  // the calls that are no turn, and the records' plan fields
  ConversationTurns turns_;
};

}  // namespace kvbench::run
