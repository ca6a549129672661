#pragma once
// The conversations of a run (the conversation workload): each one's messages so far and what its
// last turn left in the server's cache, the request of each turn, and the reuse predicted for it.
//
// A turn's prompt is the shared system prompt, the conversation's first user message (its unique
// first line, then filler), every answer the server actually gave with the user message after
// it, and the new user message. Two predictions go into its record, both from token ids where the
// kind gives them: `history_tokens`, what the turn would reuse had the server kept this
// conversation's history (everything up to the end of the previous answer, less the token always
// read again), and `expected_cache_n`, what it should reuse from what its pinned slot last held
// (a slot another conversation took over holds only the shared system prompt in common).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/core/record.h"
#include "harness/plan/plan.h"
#include "harness/run/call_records.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/conversation/record.h"
#include "harness/workloads/conversation/turn.h"

namespace kvbench::run {

using workloads::turn_record;
using workloads::TurnRecord;

// What a server's cache holds after a call: the prompt's ids and what was generated after them.
struct HeldTokens {
  std::vector<int> prompt;
  std::vector<int> answer_ids;  // where the stream gave them
  int answer_count = 0;         // tokens generated (the last one is never read into the cache)
  int prompt_count = 0;         // the prompt as the server counted it (kinds without ids)
};

// The tokens of `ids` a cache holding `held` serves (less the one token always read again), and
// how that was known: "ids" when the generated ids are known, "count" when only their number is
// (the answer, sent back, read as the tokens that were generated). Pure.
std::pair<int, std::string> held_reuse(const std::vector<int>& ids, const HeldTokens& held);

class ConversationTurns {
 public:
  ConversationTurns(const scenario::Scenario& s, const workloads::Conversation& conv)
      : s_(s), conv_(conv) {}

  void set_run_id(std::string run_id) { run_id_ = std::move(run_id); }
  // The answers of turns already recorded (a resumed run): their conversations continue from
  // them.
  void restore(const std::vector<CallRecord>& recorded);
  // A block's server was (re)started: its slots hold `slot0` in slot 0 and nothing else.
  void reset_slots(const std::vector<int>& slot0 = {});
  // A call that is no turn (a warm-up) read `ids` on `slot`.
  void slot_read(int slot, const std::vector<int>& ids);

  // The turn's messages, request and history prediction; `records` gives its record's plan
  // fields. A server that cannot render or count leaves it not ready (tokenize_error, or aborted
  // when interrupted).
  PreparedCall prepare(const CallRecords& records, backend::Backend& be,
                       const plan::PlannedCall& call, const plan::Block& block);
  // The reuse predicted for a prepared turn from what its pinned slot holds now, just before it
  // is sent (after any wait for its slot).
  void expect(PreparedCall& p, const backend::Capabilities& caps) const;
  // Seconds still to wait before `call` is sent: its conversation's think time after the previous
  // answer, counted from `now`.
  double wait_s(const plan::PlannedCall& call, const plan::Block& block, Nanos now) const;
  // Once the call ended, before its record is finished: the answer joins the conversation and
  // what the slot holds is updated.
  void answered(PreparedCall& p, const backend::CallResult& res);
  // Once the record is finished: "history_lost" when the server reused less than the history
  // predicted, "history_restored" when it reused more than its slot held but no more than the
  // history, "unexpected_cache_reuse" beyond both.
  static void flag(CallRecord& r);

 private:
  struct State {
    std::string nonce;
    std::string first_user;                      // the first user message after its first line
    std::vector<backend::ChatMessage> messages;  // through the last answer
    std::optional<HeldTokens> held;              // unknown after a resume
    Nanos answered{0};
    bool answered_known = false;
  };
  struct Slot {
    int conversation = -1;  // -1: a call that is no turn, or nobody
    HeldTokens held;
  };
  using Key = std::pair<int, int>;  // block, conversation

  std::string user_text(backend::Backend& be, const workloads::Turn& t,
                        const std::string& first_line);
  // Starts the conversation of `t` afresh in `st`: the system prompt, then its first user message
  // opening with `nonce`.
  void open_conversation(backend::Backend& be, const workloads::Turn& t, const std::string& nonce,
                         const std::string& system, State& st);
  // The turn's history_tokens (what it reuses had the server kept its conversation's history):
  // from token ids, or from the count the server reported for the previous prompt.
  static void predict_history(const PreparedCall& p, const State& st, const workloads::Turn& t,
                              workloads::TurnRecord& rt);
  const std::string& system_text(backend::Backend& be);

  const scenario::Scenario& s_;
  const workloads::Conversation& conv_;
  std::string run_id_;
  std::string system_;
  bool system_built_ = false;
  std::map<Key, State> states_;
  std::map<int, std::optional<Slot>> slots_;                     // nullopt: unknown (a failed call)
  std::map<std::pair<Key, int>, std::string> recorded_answers_;  // (block, conversation), turn
  std::map<Key, std::string> recorded_nonces_;
};

}  // namespace kvbench::run
