#include "harness/workloads/trace/report_trace.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "harness/workloads/trace/reuse.h"

namespace kvbench::report {

using nlohmann::json;
using workloads::replay_record;

int reused_blocks(const workloads::ReplayRecord& r, long long tokens) {
  if (tokens >= r.input_tokens - 1 && tokens > 0) {
    return r.blocks;
  }
  return r.block_tokens <= 0 ? 0 : std::min(r.blocks, static_cast<int>(tokens / r.block_tokens));
}

std::optional<int> reported_reuse(const CallRecord& r) {
  if (replay_record(r) == nullptr || !r.ok() || !r.server.cache_n) {
    return std::nullopt;
  }
  return std::max(0, *r.server.cache_n - replay_record(r)->lead_tokens);
}

std::optional<int> predicted_reuse(const workloads::ReplayRecord& t) {
  if (!t.predicted_tokens) {
    return std::nullopt;
  }
  return std::max(0, *t.predicted_tokens - t.lead_tokens);
}

std::optional<TraceReuse> trace_reuse(const CallRecord& r, TraceReuseKind kind) {
  if (replay_record(r) == nullptr) {
    return std::nullopt;
  }
  const auto& t = *replay_record(r);
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
    tokens += replay_record(*c)->input_tokens;
    reused_tokens += u->tokens;
    blocks += replay_record(*c)->blocks;
    reused += u->blocks;
    if (replay_record(*c)->blocks > 0) {
      shares += static_cast<double>(u->blocks) / replay_record(*c)->blocks;
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
    if (replay_record(*c)->materialized) {
      ++sent;
      as_planned += *replay_record(*c)->materialized ? 1 : 0;
      lead = replay_record(*c)->lead_tokens;
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
    const auto predicted = predicted_reuse(*replay_record(*c));
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

// The cache's capacity in the trace's blocks, and what it is: a managed llama-server's slots'
// KV cells (its host cache, whose size in tokens is not known, aside), or an attached block
// cache's pool; nullopt where neither is known.
namespace {

std::optional<std::pair<double, std::string>> capacity_in_blocks(const scenario::ServerSpec& server,
                                                                 const workloads::TraceReplay& t,
                                                                 const CallRecord& first) {
  const double block = replay_record(first)->block_tokens;
  if (server.managed()) {
    const int slots = t.slots;
    return std::pair{slots * first.num_ctx / block,
                     fmt::format("the KV cells of {} slot{} of {} tokens, the host prompt cache "
                                 "aside",
                                 slots, slots == 1 ? "" : "s", first.num_ctx)};
  }
  if (t.capacity_blocks) {
    const int step = server.cache_rule.step;
    return std::pair{static_cast<double>(*t.capacity_blocks) * step / block,
                     fmt::format("a pool of {} blocks of {} tokens", *t.capacity_blocks, step)};
  }
  return std::nullopt;
}

}  // namespace

json working_set_json(const scenario::ServerSpec& server, const workloads::TraceReplay& t,
                      const std::vector<const CallRecord*>& replayed) {
  std::vector<const CallRecord*> sent;
  for (const CallRecord* c : replayed) {
    if (c->block == replayed.front()->block && replay_record(*c)->working_set_blocks) {
      sent.push_back(c);
    }
  }
  if (sent.empty()) {
    return nullptr;
  }
  const auto capacity = capacity_in_blocks(server, t, *sent.front());
  json points = json::array();
  const std::size_t n = std::min<std::size_t>(10, sent.size());
  for (std::size_t k = 0; k < n; ++k) {
    const CallRecord& c = *sent[n == 1 ? 0 : k * (sent.size() - 1) / (n - 1)];
    const auto blocks = *replay_record(c)->working_set_blocks;
    points.push_back(
        {{"index", replay_record(c)->index},
         {"sent_ms", replay_record(c)->sent_ms ? json(*replay_record(c)->sent_ms) : json(nullptr)},
         {"blocks", blocks},
         {"of_capacity",
          capacity ? json(static_cast<double>(blocks) / capacity->first) : json(nullptr)}});
  }
  return {{"capacity_blocks", capacity ? json(capacity->first) : json(nullptr)},
          {"capacity", capacity ? json(capacity->second) : json(nullptr)},
          {"points", points}};
}

void write_working_set(std::ostream& md, const json& w) {
  if (w.is_null()) {
    return;
  }
  md << "\nThe working set over time: the distinct blocks this replay had sent by each request";
  if (w["capacity"].is_string()) {
    md << fmt::format(", against the cache's capacity of {:.0f} blocks ({})",
                      w["capacity_blocks"].get<double>(), w["capacity"].get<std::string>());
  }
  md << ":\n\n| request (trace index) | sent s | working set (blocks) | of the capacity |\n"
        "|---:|---:|---:|---:|\n";
  for (const auto& p : w["points"]) {
    md << fmt::format(
        "| {} | {} | {} | {} |\n", p["index"].get<int>(),
        p["sent_ms"].is_null() ? std::string("-")
                               : fmt::format("{:.1f}", p["sent_ms"].get<double>() / 1000),
        p["blocks"].get<long long>(),
        p["of_capacity"].is_null() ? std::string("-")
                                   : fmt::format("{:.2f}", p["of_capacity"].get<double>()));
  }
}

}  // namespace kvbench::report
