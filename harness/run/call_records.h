#pragma once
// The record of each call, built in one place: the fields the plan gives it, its prompt (built to
// its exact token count with its unique first line, or a prefix-reuse pair's cold read or
// edited resend) and, once the call has ended, its timings, server figures, outcome and flags.

#include <optional>
#include <string>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/core/record.h"
#include "harness/plan/plan.h"
#include "harness/run/call_source.h"
#include "harness/run/pair_prompt.h"
#include "harness/scenario/scenario.h"

namespace kvbench::run {

// The reuse predicted for `p` on a server whose cache (or pinned slot) last read `slot`: with
// token ids, the shared prefix (less the one token always read again) in the server's cache
// rule; without them, or with the slot not known, 0 for a fresh read when the rule has a minimum
// (nothing before the unique first line reaches it); otherwise nothing is predicted.
std::optional<int> predicted_reuse(const PreparedCall& p, bool token_ids,
                                   const std::vector<int>* slot);

class CallRecords {
 public:
  // `wall_clock` (time since the Unix epoch) dates the timestamp lines of pair prompts.
  CallRecords(const scenario::Scenario& s, const Clock& wall_clock)
      : s_(s), wall_clock_(wall_clock) {}

  // The run id every record and nonce carries (a resumed run keeps its own).
  void set_run_id(std::string run_id) { run_id_ = std::move(run_id); }

  // What the plan says of `call`: run id, seq, block, round, kind, factor levels, wall time.
  CallRecord base(const plan::PlannedCall& call, const plan::Block& block) const;

  // The call's prompt and request, counted and tokenized by `be`. A server that cannot count
  // leaves the call not ready, its record's outcome "tokenize_error".
  PreparedCall prepare(backend::Backend& be, const plan::PlannedCall& call,
                       const plan::Block& block);

  // Fills the record of a call that ran: client timings, server figures, outcome, and the flags
  // prompt_length_inexact, edit_changed_token_count, unexpected_cache_reuse (more reuse than
  // predicted) and prompt_cache_hit (a measured cold read found its first line cached).
  void finish(PreparedCall& p, backend::CallResult res);

 private:
  const scenario::Scenario& s_;
  const Clock& wall_clock_;
  std::string run_id_;
  PairPrompts pairs_;  // the cold prompt of the pair in progress
};

}  // namespace kvbench::run
