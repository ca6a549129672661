#include "harness/workloads/trace/report_trace.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/workloads/trace/reuse.h"

namespace kvbench::report {

using nlohmann::json;

int reused_blocks(const CallRecord::Replay& r, long long tokens) {
  if (tokens >= r.input_tokens - 1 && tokens > 0) {
    return r.blocks;
  }
  return r.block_tokens <= 0 ? 0 : std::min(r.blocks, static_cast<int>(tokens / r.block_tokens));
}

std::optional<TraceReuse> trace_reuse(const CallRecord& r, TraceReuseKind kind) {
  if (!r.replay) {
    return std::nullopt;
  }
  const auto& t = *r.replay;
  switch (kind) {
    case TraceReuseKind::infinite:
      return TraceReuse{t.infinite_tokens, t.infinite_blocks};
    case TraceReuseKind::predicted:
      if (!t.predicted_tokens) {
        return std::nullopt;
      }
      return TraceReuse{*t.predicted_tokens, reused_blocks(t, *t.predicted_tokens)};
    case TraceReuseKind::actual:
      if (!r.ok() || !r.server.cache_n) {
        return std::nullopt;
      }
      return TraceReuse{*r.server.cache_n, reused_blocks(t, *r.server.cache_n)};
  }
  return std::nullopt;
}

std::optional<TraceRates> trace_rates(const std::vector<const CallRecord*>& calls,
                                      TraceReuseKind kind) {
  long long tokens = 0;
  long long reused_tokens = 0;
  long long blocks = 0;
  long long reused = 0;
  double shares = 0;
  int with_blocks = 0;
  int n = 0;
  for (const CallRecord* c : calls) {
    const auto u = trace_reuse(*c, kind);
    if (!u || !c->ok()) {  // the three rates over the same requests: those that were answered
      continue;
    }
    ++n;
    tokens += c->replay->input_tokens;
    reused_tokens += u->tokens;
    blocks += c->replay->blocks;
    reused += u->blocks;
    if (c->replay->blocks > 0) {
      shares += static_cast<double>(u->blocks) / c->replay->blocks;
      ++with_blocks;
    }
  }
  if (n == 0) {
    return std::nullopt;
  }
  TraceRates out;
  out.tokens = tokens == 0 ? 0 : static_cast<double>(reused_tokens) / static_cast<double>(tokens);
  out.blocks = blocks == 0 ? 0 : static_cast<double>(reused) / static_cast<double>(blocks);
  out.per_request_mean = with_blocks == 0 ? 0 : shares / with_blocks;
  return out;
}

}  // namespace kvbench::report
