#include "harness/report/summary.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/report/concurrency.h"
#include "harness/report/effects.h"
#include "harness/report/lesson_figures.h"
#include "harness/report/memory.h"
#include "harness/report/prefix.h"
#include "harness/stats/descriptive.h"

namespace kvbench::report {

using nlohmann::json;

Quartiles quartiles(std::vector<double> values) {
  Quartiles q;
  q.n = values.size();
  if (values.empty()) {
    return q;
  }
  std::sort(values.begin(), values.end());
  q.q1 = stats::percentile_sorted(values, 0.25);
  q.median = stats::percentile_sorted(values, 0.5);
  q.q3 = stats::percentile_sorted(values, 0.75);
  return q;
}

namespace {

bool is_timed(const CallRecord& r) {
  return r.kind == "timed";
}

// The condition table describes reads of fresh prompts: a pair's edited resend is reported
// with its pair (prefix.h) instead.
bool is_fresh_timed(const CallRecord& r) {
  return is_timed(r) && r.pair_role != "edited";
}

template <typename F>
std::vector<double> collect(const std::vector<const CallRecord*>& rs, F&& get) {
  std::vector<double> out;
  for (const auto* r : rs) {
    if (auto v = get(*r)) {
      out.push_back(*v);
    }
  }
  return out;
}

std::string cell(const Quartiles& q, int precision) {
  if (q.n == 0) {
    return "-";
  }
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", q.median, precision, q.q1, precision, q.q3,
                     precision);
}

std::string opt(const std::optional<double>& v) {
  return v ? fmt::format("{:.3f}", *v) : "";
}
std::string opt(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "";
}

}  // namespace

std::vector<ConditionSummary> summarize_conditions(const std::vector<CallRecord>& calls) {
  std::map<std::tuple<std::string, int, std::string, int>, std::vector<const CallRecord*>> groups;
  for (const auto& r : calls) {
    if (is_fresh_timed(r)) {
      groups[{r.variant, r.num_ctx, r.cache_type, r.prompt_tokens}].push_back(&r);
    }
  }
  std::vector<ConditionSummary> out;
  for (const auto& [key, rs] : groups) {
    ConditionSummary c;
    std::tie(c.variant, c.num_ctx, c.cache_type, c.prompt_tokens) = key;
    c.calls = static_cast<int>(rs.size());
    std::vector<const CallRecord*> ok;
    for (const auto* r : rs) {
      (r->ok() ? ok.push_back(r) : void(++c.failed));
      c.flagged += r->flags.empty() ? 0 : 1;
      c.max_cache_n = std::max(c.max_cache_n, r->server.cache_n.value_or(0));
    }
    c.ttft_ms = quartiles(collect(ok, [](const CallRecord& r) { return r.client.ttft_ms; }));
    c.server_prompt_ms =
        quartiles(collect(ok, [](const CallRecord& r) { return r.server.prompt_ms; }));
    c.decode_tps = quartiles(collect(ok, [](const CallRecord& r) { return r.client.decode_tps; }));
    c.server_decode_tps =
        quartiles(collect(ok, [](const CallRecord& r) { return r.server.decode_tps; }));
    out.push_back(std::move(c));
  }
  return out;
}

CacheCheck check_cache(const std::vector<CallRecord>& calls) {
  CacheCheck c;
  for (const auto& r : calls) {
    if (!is_timed(r) || !r.ok() || !r.server.cache_n) {
      continue;
    }
    ++c.timed_ok;
    c.max_cache_n = std::max(c.max_cache_n, *r.server.cache_n);
    c.matched_expected += r.expected_cache_n == r.server.cache_n ? 1 : 0;
    const auto has = [&](const char* f) {
      return std::find(r.flags.begin(), r.flags.end(), f) != r.flags.end();
    };
    c.prompt_cache_hits += has("prompt_cache_hit") ? 1 : 0;
    c.unexpected += has("unexpected_cache_reuse") ? 1 : 0;
  }
  return c;
}

void write_markdown(std::ostream& out, const json& run, const std::vector<CallRecord>& calls,
                    const std::vector<std::string>& warnings) {
  const auto& sc = run.value("scenario", json::object());
  out << fmt::format("# kvbench run: {}\n\n", sc.value("name", "?"));
  out << fmt::format("- run id `{}`, {} ({} to {})\n", run.value("run_id", "?"),
                     run.value("status", "?"), run.value("started", "?"),
                     run.value("finished", "?"));
  const auto& server = run.value("server", json::object());
  std::string version = server.value("version", "");
  version = version.substr(0, version.find('\n'));
  out << fmt::format("- server: {} ({}){}\n", server.value("kind", "?"), server.value("mode", "?"),
                     version.empty() ? "" : ", " + version);
  const auto& model = run.value("model", json::object());
  out << fmt::format("- model: {}\n", model.value("name", model.value("path", "?")));
  const auto& m = run.value("machine", json::object());
  if (!m.empty()) {
    out << fmt::format("- machine: {}, {} logical cores\n", m.value("cpu_model", "?"),
                       m.value("logical_cores", 0));
  }
  int failed = 0;
  int flagged = 0;
  for (const auto& r : calls) {
    failed += r.ok() ? 0 : 1;
    flagged += r.flags.empty() ? 0 : 1;
  }
  out << fmt::format("- calls: {} recorded, {} failed, {} flagged\n", calls.size(), failed,
                     flagged);
  for (const auto& w : warnings) {
    out << "- warning: " << w << "\n";
  }
  out << "\nMedian [IQR] over the timed calls of each condition.\n\n";
  const auto rows = summarize_conditions(calls);
  const bool variants =
      std::any_of(rows.begin(), rows.end(), [](const auto& c) { return !c.variant.empty(); });
  out << (variants ? "| variant " : "")
      << "| num_ctx | cache | prompt tokens | n | failed | TTFT ms | server prompt ms | decode "
         "tok/s | server decode tok/s | max cache_n | flagged |\n";
  out << (variants ? "|---" : "") << "|---:|---|---:|---:|---:|---|---|---|---|---:|---:|\n";
  for (const auto& c : rows) {
    out << (variants ? "| " + c.variant + " " : "")
        << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", c.num_ctx,
                       c.cache_type, c.prompt_tokens, c.calls - c.failed, c.failed,
                       cell(c.ttft_ms, 1), cell(c.server_prompt_ms, 1), cell(c.decode_tps, 2),
                       cell(c.server_decode_tps, 2), c.max_cache_n, c.flagged);
  }
  const auto cc = check_cache(calls);
  if (cc.timed_ok == 0) {
    out << "\nPrompt cache: the server reported no reused-token count (cache_n) for any timed "
           "call, so reuse cannot be checked; the unique first lines still keep every prompt "
           "fresh.\n";
  } else {
    out << fmt::format(
        "\nPrompt cache: {} of {} timed calls reused exactly the tokens their start shares with "
        "the previous prompt (at most {}); {} read past their unique first line from the cache; "
        "{} reused more than predicted.\n",
        cc.matched_expected, cc.timed_ok, cc.max_cache_n, cc.prompt_cache_hits, cc.unexpected);
  }
  write_effects_markdown(
      out, analysis::analyze(calls,
                             run.value("scenario", json::object()).value("seed", std::uint64_t{1}),
                             baseline_variant(run)));
  write_concurrency_markdown(out, run);
  write_memory_markdown(out, analyze_memory(run));
  write_prefix_markdown(out, calls, lesson_figures());
}

void write_conditions_csv(std::ostream& out, const std::vector<ConditionSummary>& rows) {
  out << "num_ctx,cache_type,prompt_tokens,n,failed,ttft_ms_median,ttft_ms_q1,ttft_ms_q3,"
         "server_prompt_ms_median,decode_tps_median,decode_tps_q1,decode_tps_q3,"
         "server_decode_tps_median,max_cache_n,flagged";
  // A last column for the server variant, when the run compares variants.
  const bool variants =
      std::any_of(rows.begin(), rows.end(), [](const auto& c) { return !c.variant.empty(); });
  out << (variants ? ",variant\n" : "\n");
  for (const auto& c : rows) {
    out << fmt::format(
        "{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{}", c.num_ctx,
        c.cache_type, c.prompt_tokens, c.calls - c.failed, c.failed, c.ttft_ms.median, c.ttft_ms.q1,
        c.ttft_ms.q3, c.server_prompt_ms.median, c.decode_tps.median, c.decode_tps.q1,
        c.decode_tps.q3, c.server_decode_tps.median, c.max_cache_n, c.flagged);
    out << (variants ? "," + c.variant + "\n" : "\n");
  }
}

void write_calls_csv(std::ostream& out, const std::vector<CallRecord>& calls) {
  out << "seq,block,round,kind,num_ctx,cache_type,prompt_tokens,prompt_tokens_counted,t_start_s,"
         "outcome,ttft_ms,decode_tps,e2e_ms,tokens,server_prompt_n,server_cache_n,"
         "expected_cache_n,server_prompt_ms,server_predicted_n,server_predicted_ms,flags\n";
  for (const auto& r : calls) {
    out << fmt::format("{},{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       r.seq, r.block, r.round, r.kind, r.num_ctx, r.cache_type, r.prompt_tokens,
                       opt(r.prompt_tokens_counted), r.t_start_s, r.outcome, opt(r.client.ttft_ms),
                       opt(r.client.decode_tps), opt(r.client.e2e_ms), r.client.tokens,
                       opt(r.server.prompt_n), opt(r.server.cache_n), opt(r.expected_cache_n),
                       opt(r.server.prompt_ms), opt(r.server.predicted_n),
                       opt(r.server.predicted_ms), fmt::join(r.flags, ";"));
  }
}

namespace {
json q_json(const Quartiles& q) {
  return {{"n", q.n}, {"q1", q.q1}, {"median", q.median}, {"q3", q.q3}};
}
}  // namespace

json to_json(const std::vector<ConditionSummary>& rows, const CacheCheck& cache) {
  json conds = json::array();
  for (const auto& c : rows) {
    json cj = {{"num_ctx", c.num_ctx},
               {"cache_type", c.cache_type},
               {"prompt_tokens", c.prompt_tokens},
               {"calls", c.calls},
               {"failed", c.failed},
               {"ttft_ms", q_json(c.ttft_ms)},
               {"server_prompt_ms", q_json(c.server_prompt_ms)},
               {"decode_tps", q_json(c.decode_tps)},
               {"server_decode_tps", q_json(c.server_decode_tps)},
               {"max_cache_n", c.max_cache_n},
               {"flagged", c.flagged}};
    if (!c.variant.empty()) {
      cj["variant"] = c.variant;
    }
    conds.push_back(cj);
  }
  return {{"conditions", conds},
          {"prompt_cache",
           {{"timed_ok", cache.timed_ok},
            {"matched_expected", cache.matched_expected},
            {"max_cache_n", cache.max_cache_n},
            {"prompt_cache_hits", cache.prompt_cache_hits},
            {"unexpected", cache.unexpected}}}};
}

}  // namespace kvbench::report
