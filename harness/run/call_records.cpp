#include "harness/run/call_records.h"

#include <chrono>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/http/transport.h"
#include "harness/prompt/edit.h"
#include "harness/prompt/prompt.h"

namespace kvbench::run {

CallRecord CallRecords::base(const plan::PlannedCall& call, const plan::Block& block) const {
  CallRecord r;
  r.run_id = run_id_;
  r.seq = call.seq;
  r.block = block.index;
  r.round = call.round;
  r.kind = call.kind;
  r.prompt_tokens = call.prompt_tokens;
  r.num_ctx = block.config.num_ctx;
  r.cache_type = block.config.cache_type;
  r.variant = block.config.variant;
  r.batch_size = block.config.batch_size ? block.config.batch_size : s_.server.batch_size;
  r.ubatch_size = block.config.ubatch_size ? block.config.ubatch_size : s_.server.ubatch_size;
  r.wall_start = utc_now_rfc3339();
  if (s_.concurrency.active()) {
    r.slots = block.config.slots;
  }
  call.part.start_record(r);  // also on a call never sent (its server died, or never started)
  return r;
}

PreparedCall CallRecords::prepare(backend::Backend& be, const plan::PlannedCall& call,
                                  const plan::Block& block) {
  PreparedCall p;
  p.call = call;
  CallRecord& r = p.record;
  r = base(call, block);
  r.nonce = s_.unique_first_line ? prompt::nonce_line(run_id_, call.seq)
                                 : fmt::format("kvbench prompt of {} tokens", call.prompt_tokens);
  const std::uint64_t filler_seed =
      s_.seed * std::uint64_t{1000003} + static_cast<std::uint64_t>(call.prompt_tokens);
  prompt::Built built;
  try {
    if (call.edit) {
      const auto unix_s = std::chrono::duration_cast<std::chrono::seconds>(wall_clock_.now());
      auto pair = pairs_.next(call, r, r.nonce, filler_seed, unix_s.count(), be);
      built = std::move(pair.built);
      p.ids = std::move(pair.ids);
      p.same_count = pair.same_count;
    } else {
      built = prompt::build_prompt(call.prompt_tokens, r.nonce, filler_seed,
                                   [&](std::string_view t) { return be.count_tokens(t); });
      p.ids = be.tokenize(built.text);
    }
    p.first_line_tokens = be.count_tokens(r.nonce + "\n");
  } catch (const Error& e) {
    // Cut off by Ctrl-C while tokenizing: an aborted call, which --resume repeats.
    const bool cut = http::interrupted();
    r.outcome = cut ? Outcome::aborted : Outcome::tokenize_error;
    r.error = cut ? std::string(http::kInterruptedError) : e.what();
    return p;
  }
  p.ready = true;
  p.fresh = s_.unique_first_line && call.role != plan::PairRole::edited;
  p.cache_rule = s_.server.cache_rule;
  p.exact = built.exact;
  if (!p.ids.empty()) {
    r.prompt_tokens_counted = static_cast<int>(p.ids.size());
  }
  p.spec.prompt = std::move(built.text);
  p.spec.max_tokens = s_.max_tokens;
  p.spec.seed = s_.seed;
  p.spec.timeout = std::chrono::milliseconds(static_cast<long long>(s_.timeout_s * 1000));
  return p;
}

std::optional<int> predicted_reuse(const PreparedCall& p, bool token_ids,
                                   const std::vector<int>* slot) {
  if (token_ids && slot != nullptr && !p.ids.empty()) {
    return p.cache_rule.apply(prompt::expected_reuse(p.ids, *slot));
  }
  if (p.fresh && p.cache_rule.min_tokens > 0) {
    return 0;
  }
  return std::nullopt;
}

void CallRecords::finish(PreparedCall& p, backend::CallResult res) {
  CallRecord& r = p.record;
  r.client = derive_timing(res.trace);
  r.server = std::move(res.server);
  r.outcome = res.outcome;
  r.http_status = res.http_status;
  r.error = res.error;
  if (!p.exact) {
    r.flags.emplace_back("prompt_length_inexact");
  }
  if (!p.same_count) {
    r.flags.emplace_back("edit_changed_token_count");
  }
  if (p.call.part) {
    return;  // a workload's own call (a turn, a replayed request): judged by its workload
  }
  if (r.server.cache_n && r.expected_cache_n && *r.server.cache_n > *r.expected_cache_n) {
    r.flags.emplace_back("unexpected_cache_reuse");
  }
  // An edited resend reuses its cold read on purpose; every other measured call must read cold.
  if (p.call.kind != plan::CallKind::warmup && p.call.role != plan::PairRole::edited &&
      r.server.cache_n && *r.server.cache_n >= p.first_line_tokens) {
    r.flags.emplace_back("prompt_cache_hit");
  }
  pairs_.check_reported_count(p.call, r);
}

}  // namespace kvbench::run
