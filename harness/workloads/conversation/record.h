#pragma once
// The conversation's part of a call record (core/record_part.h): the turn's place, the reuse its
// history predicts and the answer the next turn sends back, under the record's "conversation".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/describe.h"
#include "harness/core/record.h"
#include "harness/workloads/conversation/spec.h"

namespace kvbench::workloads {

struct TurnRecord {
  // Its fields, described once (core/describe.h); those with columns first.
  static const std::vector<describe::Field<TurnRecord>>& fields();
  static constexpr std::string_view kKey = Conversation::kName;
  int conversation = 0;     // numbered over its block's sets
  int set = 0;              // the block's set
  int conversations = 1;    // how many conversations took turns in the set
  int turn = 1;             // 1-based
  bool reuse = true;        // false: reuse defeated
  std::optional<int> slot;  // the server slot it was pinned to
  // The reuse predicted had the server kept this conversation's history: the prompt's tokens up
  // to the end of the previous turn's answer (less the token always read again); 0 on a first
  // turn or with reuse off. Absent where the server gives no token ids.
  std::optional<int> history_tokens;
  // How the history was known: "ids" (the tokens the previous turn generated), "count" (the
  // previous answer's token count, the answer read back as it was generated), or "reported" (no
  // token ids: the previous prompt as the server counted it, a least the turn reuses).
  std::string history_basis;
  // The least reuse that still counts as the history kept: history_tokens, or on the "count"
  // basis the previous prompt (the answer's tokens, read back, may differ from those generated).
  std::optional<int> history_floor;
  std::string answer;  // the generated text, which the next turn sends back
  // Conversations at once: from when the turn was due (its previous answer and think time) to its
  // send, preparing and the wait for its slot included.
  std::optional<double> wait_ms;
};

// The record's turn; nullptr on a call that is not a turn.
inline const TurnRecord* turn_record(const CallRecord& r) {
  return r.part.get<TurnRecord>();
}
inline TurnRecord* turn_record(CallRecord& r) {
  return r.part.get<TurnRecord>();
}

}  // namespace kvbench::workloads
