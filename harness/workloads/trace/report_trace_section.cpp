// The trace section of a run's report: Markdown and JSON from the replayed requests' records.

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "harness/stats/descriptive.h"
#include "harness/workloads/trace/report_trace.h"

namespace kvbench::report {

using nlohmann::json;
using workloads::replay_record;

namespace {

constexpr std::size_t kFirstShown = 5;  // requests named per gap class

constexpr const char* kDefinitions[][2] = {
    {"tokens", "reused tokens / input tokens"},
    {"blocks",
     "reused blocks / blocks sent (a reuse that reaches a prompt's last token counts all its "
     "blocks: the server always reads that token again)"},
    {"per_request_mean", "the mean over requests of each request's reused blocks / its blocks"},
};

json rates_json(const std::optional<TraceRates>& r) {
  if (!r) {
    return nullptr;
  }
  return {{"tokens", r->tokens}, {"blocks", r->blocks}, {"per_request_mean", r->per_request_mean}};
}

std::string rate_cell(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f} %", 100 * *v) : "-";
}

// The whole trace's infinite-cache hit rates, as run.json recorded them.
std::optional<TraceRates> whole_trace_rates(const json& whole_trace) {
  const json whole = whole_trace.value("infinite_hit_rate", json());
  if (!whole.is_object()) {
    return std::nullopt;
  }
  return TraceRates{whole.value("tokens", 0.0), whole.value("blocks", 0.0),
                    whole.value("per_request_mean", 0.0)};
}

struct Gap {
  int count = 0;
  std::vector<int> first;  // trace indices
};

struct Gaps {
  std::map<std::string, Gap> loss;
  std::map<std::string, Gap> mismatch;
  int predicted = 0;  // requests with a prediction and a reported reuse
  int equal = 0;      // ... where they agree
};

Gaps gaps_of(const std::vector<const CallRecord*>& calls) {
  Gaps g;
  const auto add = [](std::map<std::string, Gap>& m, const std::string& cls, int index) {
    Gap& gap = m[cls];
    ++gap.count;
    if (gap.first.size() < kFirstShown) {
      gap.first.push_back(index);
    }
  };
  for (const CallRecord* c : calls) {
    const auto& t = *replay_record(*c);
    if (!t.loss.empty()) {
      add(g.loss, t.loss, t.index);
    }
    if (!t.mismatch.empty()) {
      add(g.mismatch, t.mismatch, t.index);
    }
    if (t.predicted_tokens && c->ok() && c->server.cache_n) {  // as the server counts
      ++g.predicted;
      g.equal += *t.predicted_tokens == *c->server.cache_n ? 1 : 0;
    }
  }
  return g;
}

json gaps_json(const std::map<std::string, Gap>& m) {
  json out = json::object();
  for (const auto& [cls, gap] : m) {
    out[cls] = {{"count", gap.count}, {"first", gap.first}};
  }
  return out;
}

std::vector<double> slips_ms(const std::vector<const CallRecord*>& calls) {
  std::vector<double> out;
  for (const CallRecord* c : calls) {
    if (replay_record(*c)->sent_ms) {
      out.push_back(*replay_record(*c)->sent_ms - replay_record(*c)->due_ms);
    }
  }
  return out;
}

json request_json(const CallRecord& c) {
  const auto& t = *replay_record(c);
  const auto optional = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  return {{"index", t.index},
          {"block", c.block},
          {"due_ms", t.due_ms},
          {"sent_ms", optional(t.sent_ms)},
          {"input_tokens", t.input_tokens},
          {"predicted_infinite_tokens", t.infinite_tokens},
          {"predicted_tokens", optional(predicted_reuse(t))},
          {"reused_tokens", optional(reported_reuse(c))},
          {"loss", t.loss.empty() ? json(nullptr) : json(t.loss)},
          {"mismatch", t.mismatch.empty() ? json(nullptr) : json(t.mismatch)},
          {"ttft_ms", optional(c.client.ttft_ms)},
          {"outcome", to_string(c.outcome)}};
}

// TTFT by the share of its prompt a request reused (as the server reported it).
void write_ttft(std::ostream& out, const std::vector<const CallRecord*>& calls) {
  const double edges[] = {0, 0.5, 0.9, 1.01};
  const char* names[] = {"under 50 %", "50 to 90 %", "90 % or more"};
  out << "\nTTFT against the tokens reused and computed (the server's cache_n; computed = "
         "input - reused):\n\n| reused share | requests | median reused | median computed | "
         "median TTFT ms |\n|---|---:|---:|---:|---:|\n";
  for (int b = 0; b < 3; ++b) {
    std::vector<double> reused;
    std::vector<double> computed;
    std::vector<double> ttft;
    for (const CallRecord* c : calls) {
      const auto n = reported_reuse(*c);
      if (!n || !c->client.ttft_ms) {
        continue;
      }
      const double share = static_cast<double>(*n) / replay_record(*c)->input_tokens;
      if (share >= edges[b] && share < edges[b + 1]) {
        reused.push_back(*n);
        computed.push_back(replay_record(*c)->input_tokens - *n);
        ttft.push_back(*c->client.ttft_ms);
      }
    }
    if (ttft.empty()) {
      continue;
    }
    out << fmt::format("| {} | {} | {:.0f} | {:.0f} | {:.1f} |\n", names[b], ttft.size(),
                       stats::median(reused), stats::median(computed), stats::median(ttft));
  }
}

void write_gaps(std::ostream& out, const Gaps& g) {
  if (g.predicted > 0) {
    out << fmt::format(
        "\nThe policy's prediction equals the reuse the server reported on {} of {} requests "
        "({:.1f} %).\n",
        g.equal, g.predicted, 100.0 * g.equal / g.predicted);
  }
  if (g.loss.empty() && g.mismatch.empty()) {
    return;
  }
  out << "\n| gap | class | requests | first (trace index) |\n|---|---|---:|---|\n";
  for (const auto& [cls, gap] : g.loss) {
    out << fmt::format("| policy below infinite | {} | {} | {} |\n", cls, gap.count,
                       fmt::join(gap.first, ", "));
  }
  for (const auto& [cls, gap] : g.mismatch) {
    out << fmt::format("| reported against policy | {} | {} | {} |\n", cls, gap.count,
                       fmt::join(gap.first, ", "));
  }
}

// What the section says, gathered once from the records.
struct TraceFacts {
  const workloads::TraceReplay* spec = nullptr;  // as run.json records it
  std::vector<const CallRecord*> replayed;       // by block, then trace index
  json whole_trace;  // what run.json recorded of the whole trace (requests, infinite_hit_rate)
  std::optional<TraceRates> infinite, predicted, actual, whole;
  Gaps gaps;
  std::vector<double> slips;  // sorted
  json working_set;           // null: the records do not carry it (runs before it was recorded)
  json text;                  // null: prompts were token ids
};

void write_rates(std::ostream& md, const TraceFacts& f) {
  md << "\n| hit rate | by tokens | by blocks | per-request mean |\n|---|---:|---:|---:|\n";
  const auto row = [&](const std::string& name, const std::optional<TraceRates>& r) {
    md << fmt::format("| {} | {} | {} | {} |\n", name,
                      rate_cell(r ? std::optional(r->tokens) : std::nullopt),
                      rate_cell(r ? std::optional(r->blocks) : std::nullopt),
                      rate_cell(r ? std::optional(r->per_request_mean) : std::nullopt));
  };
  if (f.whole) {
    row(fmt::format("infinite cache, the whole trace ({} requests)",
                    f.whole_trace.value("requests", 0)),
        f.whole);
  }
  row("infinite cache, the requests replayed", f.infinite);
  row("the server's policy (predicted)", f.predicted);
  row("the server's report (actual)", f.actual);
  md << "\n";
  for (const auto& [name, definition] : kDefinitions) {
    md << fmt::format("- {}: {}\n",
                      std::string(name) == "per_request_mean" ? std::string("per-request mean")
                                                              : "by " + std::string(name),
                      definition);
  }
  if (!f.whole) {
    md << "- the whole trace's rates are not in run.json: left out\n";
  }
}

std::string trace_markdown(const TraceFacts& f) {
  std::ostringstream md;
  const workloads::TraceReplay& t = *f.spec;
  md << fmt::format(
      "\n## Trace replay\n\n{} ({}): {} requests replayed, blocks of {} tokens, "
      "timing {}, at most {} in flight, {} server slot{}.\n",
      t.file.empty() ? "?" : t.file, workloads::trace::format_name(t.format), f.replayed.size(),
      replay_record(*f.replayed.front())->block_tokens, t.closed ? "closed" : "schedule",
      t.concurrency, t.slots, t.slots == 1 ? "" : "s");
  write_rates(md, f);
  if (!f.predicted) {
    md << "\nNo policy prediction: kvbench models a managed llama-server's slots and host "
          "cache.\n";
  }
  write_gaps(md, f.gaps);
  write_trace_text(md, f.text);
  if (!f.slips.empty() && !t.closed) {
    md << fmt::format(
        "\nSchedule slip (sent minus due, the first request sent on time): median "
        "{:.1f} ms, 95th percentile {:.1f} ms, most {:.1f} ms.\n",
        stats::percentile_sorted(f.slips, 0.5), stats::percentile_sorted(f.slips, 0.95),
        f.slips.back());
  }
  write_working_set(md, f.working_set);
  write_ttft(md, f.replayed);
  return md.str();
}

json trace_json(const TraceFacts& f) {
  json requests = json::array();
  for (const CallRecord* c : f.replayed) {
    requests.push_back(request_json(*c));
  }
  json definitions = json::object();
  for (const auto& [name, definition] : kDefinitions) {
    definitions[name] = definition;
  }
  json out = {
      {"file", f.spec->file},
      {"format", workloads::trace::format_name(f.spec->format)},
      {"replayed", f.replayed.size()},
      {"hit_rate",
       {{"infinite", rates_json(f.infinite)},
        {"predicted", rates_json(f.predicted)},
        {"actual", rates_json(f.actual)}}},
      {"hit_rate_definitions", definitions},
      {"whole_trace_hit_rate", f.whole ? json{{"infinite", rates_json(f.whole)}} : json(nullptr)},
      {"agreement", {{"predicted", f.gaps.predicted}, {"equal", f.gaps.equal}}},
      {"loss", gaps_json(f.gaps.loss)},
      {"mismatch", gaps_json(f.gaps.mismatch)},
      {"requests", requests}};
  if (!f.working_set.is_null()) {
    out["working_set"] = f.working_set;
  }
  if (!f.text.is_null()) {
    out["text"] = f.text;
  }
  if (!f.slips.empty()) {
    out["slip_ms"] = {{"median", stats::percentile_sorted(f.slips, 0.5)},
                      {"p95", stats::percentile_sorted(f.slips, 0.95)},
                      {"max", f.slips.back()}};
  }
  return out;
}

}  // namespace

WorkloadSection trace_section(const workloads::TraceReplay& spec,
                              const scenario::ServerSpec& server,
                              const std::vector<CallRecord>& calls) {
  WorkloadSection out;
  out.key = "trace";
  out.keeps_its_server = true;
  TraceFacts f;
  for (const auto& c : calls) {
    if (replay_record(c) != nullptr) {
      f.replayed.push_back(&c);
    }
  }
  if (f.replayed.empty()) {
    return out;
  }
  std::sort(f.replayed.begin(), f.replayed.end(), [](const CallRecord* a, const CallRecord* b) {
    return std::pair(a->block, replay_record(*a)->index) <
           std::pair(b->block, replay_record(*b)->index);
  });
  f.spec = &spec;
  f.infinite = trace_rates(f.replayed, TraceReuseKind::infinite);
  f.predicted = trace_rates(f.replayed, TraceReuseKind::predicted);
  f.actual = trace_rates(f.replayed, TraceReuseKind::actual);
  f.whole_trace =
      spec.whole_trace_json.empty() ? json::object() : json::parse(spec.whole_trace_json);
  f.whole = whole_trace_rates(f.whole_trace);
  f.gaps = gaps_of(f.replayed);
  f.slips = slips_ms(f.replayed);
  std::sort(f.slips.begin(), f.slips.end());
  f.working_set = working_set_json(server, spec, f.replayed);
  f.text = trace_text_json(f.replayed);
  out.present = true;
  out.markdown = trace_markdown(f);
  out.json = trace_json(f);
  if (auto p = trace_reuse_plot(f.replayed)) {
    out.plots.push_back(std::move(*p));
  }
  if (f.gaps.predicted > 0) {
    out.proof.push_back(fmt::format(
        "the server's reuse equalled its caching policy's prediction on {} of {} replayed "
        "requests",
        f.gaps.equal, f.gaps.predicted));
  }
  return out;
}

}  // namespace kvbench::report
