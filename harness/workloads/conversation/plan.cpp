// The conversation workload in the plan layer: one server slot level, and a block's calls.

#include "harness/plan/plan.h"

#include <fmt/format.h>

#include "harness/core/random.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/conversation/record.h"
#include "harness/workloads/conversation/spec.h"
#include "harness/workloads/conversation/turn.h"

namespace kvbench::workloads {

using plan::Block;
using plan::CallKind;
using plan::PairRole;
using plan::PlannedCall;

std::vector<int> slot_levels(const scenario::Scenario& /*s*/, const Conversation& conv) {
  return {conv.slots};
}

// A conversation block: warm-up calls, then one set per level and reuse mode in a shuffled order,
// each set's conversations taking their turns round-robin in a fixed order.
void fill_block(Block& b, const scenario::Scenario& s, const Conversation& conv, Rng& rng) {
  for (int w = 0; w < s.warmup; ++w) {
    b.calls.push_back(
        {0, b.index, -1, CallKind::warmup, conv.user_tokens, -1, PairRole::none, {}, {}});
  }
  std::vector<std::pair<int, bool>> sets;
  for (int level : conv.conversations) {
    for (const auto& mode : conv.reuse) {
      sets.emplace_back(level, mode == "on");
    }
  }
  kvbench::shuffle(sets.begin(), sets.end(), rng);
  int first = 0;
  for (std::size_t set = 0; set < sets.size(); ++set) {
    const auto [level, reuse] = sets[set];
    for (int t = 1; t <= conv.turns; ++t) {
      for (int k = 0; k < level; ++k) {
        // Its planned length: the system prompt and the turn's messages so far, template aside.
        const int planned =
            conv.system_tokens + t * conv.user_tokens + (t - 1) * conv.answer_tokens;
        PlannedCall c{0, b.index, t - 1, CallKind::timed, planned, -1, PairRole::none, {}, {}};
        c.part = plan::CallPart(Turn{first + k, static_cast<int>(set), level, k, t, reuse});
        b.calls.push_back(c);
      }
    }
    first += level;
  }
}

void write_part(const Turn& t, nlohmann::json& call) {
  call["conversation"] = t.conversation;
  call["set"] = t.set;
  call["conversations"] = t.conversations;
  call["turn"] = t.turn;
  call["reuse"] = t.reuse ? "on" : "off";
}

// A turn's prompt is its conversation so far.
std::string describe_part(const Turn& t, int prompt_tokens) {
  return fmt::format("  conversation {} turn {} ({} in set {}, reuse {}, about {} tokens)\n",
                     t.conversation, t.turn, t.conversations, t.set, t.reuse ? "on" : "off",
                     prompt_tokens);
}

void record_part(const Turn& t, CallRecord& r) {
  TurnRecord turn;
  turn.conversation = t.conversation;
  turn.set = t.set;
  turn.conversations = t.conversations;
  turn.turn = t.turn;
  turn.reuse = t.reuse;
  r.part = RecordPart::of(std::move(turn));
}

}  // namespace kvbench::workloads
