#include "harness/workloads/trace/report_trace.h"

#include <algorithm>
#include <ostream>

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

std::optional<int> reported_reuse(const CallRecord& r) {
  if (!r.replay || !r.ok() || !r.server.cache_n) {
    return std::nullopt;
  }
  return std::max(0, *r.server.cache_n - r.replay->lead_tokens);
}

std::optional<int> predicted_reuse(const CallRecord::Replay& t) {
  if (!t.predicted_tokens) {
    return std::nullopt;
  }
  return std::max(0, *t.predicted_tokens - t.lead_tokens);
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
      if (const auto predicted = predicted_reuse(t)) {
        return TraceReuse{*predicted, reused_blocks(t, *predicted)};
      }
      return std::nullopt;
    case TraceReuseKind::actual:
      if (const auto reused = reported_reuse(r)) {
        return TraceReuse{*reused, reused_blocks(t, *reused)};
      }
      return std::nullopt;
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

json trace_text_json(const std::vector<const CallRecord*>& replayed) {
  int sent = 0;
  int as_planned = 0;
  int lead = 0;
  for (const CallRecord* c : replayed) {
    if (c->replay->materialized) {
      ++sent;
      as_planned += *c->replay->materialized ? 1 : 0;
      lead = c->replay->lead_tokens;
    }
  }
  if (sent == 0) {
    return nullptr;
  }
  return {{"requests", sent}, {"read_as_planned", as_planned}, {"lead_tokens", lead}};
}

void write_trace_text(std::ostream& md, const json& text) {
  if (text.is_null()) {
    return;
  }
  md << fmt::format(
      "\nSent as text (this kind takes no token ids): {} of {} prompts read as their planned "
      "blocks, each checked with the server's tokenizer before it was sent. The {} tokens the "
      "server reads before every prompt (the chat template's start) are left out of the reuse "
      "above; the calls' cache_n and predicted_tokens count them.\n",
      text["read_as_planned"].get<int>(), text["requests"].get<int>(),
      text["lead_tokens"].get<int>());
}

std::optional<Plot> trace_reuse_plot(const std::vector<const CallRecord*>& replayed) {
  Plot p{"trace",
         "Trace replay: each request's reuse, proved",
         "The prompt tokens the server reported reused against what its caching policy "
         "predicts, one point per replayed request; a point off the dashed line is a gap the "
         "report names.",
         "predicted reuse (tokens)",
         "reported reuse (tokens)",
         true,
         {}};
  PlotSeries s{"a request", {}, false, false, "circle", 1};
  double most = 0;
  for (const CallRecord* c : replayed) {
    const auto predicted = predicted_reuse(*c->replay);
    const auto reported = reported_reuse(*c);
    if (predicted && reported) {
      const auto x = static_cast<double>(*predicted);
      const auto y = static_cast<double>(*reported);
      s.points.emplace_back(x, y);
      most = std::max({most, x, y});
    }
  }
  if (s.points.empty()) {
    return std::nullopt;
  }
  p.series.push_back(std::move(s));
  p.series.push_back({"reported = predicted", {{0, 0}, {most, most}}, true, true, "", 7});
  return p;
}

}  // namespace kvbench::report
