#include "harness/lesson/evaluate.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/analysis/conditions.h"
#include "harness/analysis/prefix.h"
#include "harness/core/error.h"
#include "harness/lesson/labs.h"

namespace kvbench::lesson {

namespace {
const std::map<std::string, std::vector<std::pair<std::string, std::string>>>& claims() {
  static const std::map<std::string, std::vector<std::pair<std::string, std::string>>> kClaims = {
      {"prompt-length",
       {{"ttft_rises", "Time to first token rises with prompt length"},
        {"decode_falls", "Decode rate falls with prompt length once drift is removed"}}},
      {"context-window",
       {{"memory_slope",
         "Memory grows with num_ctx by the KV arithmetic of the active cache type"}}},
      {"cache-type", {{"cache_ratio", "A q8_0 KV cache takes 34/64 of an f16 cache"}}},
      {"prefix-reuse",
       {{"reuse_0.25", "One word changed at 25 %: the second read takes about 1 - f = 0.75"},
        {"reuse_0.5", "One word changed at 50 %: the second read takes about 1 - f = 0.5"},
        {"reuse_0.75", "One word changed at 75 %: the second read takes about 1 - f = 0.25"},
        {"reuse_question", "Only the final question changed: the second read is nearly free"},
        {"reuse_none", "Unchanged resend: the second read is nearly free"}}},
      {"repeated-prompt",
       {{"trap", "A repeated prompt looks much faster at the same token count"}}},
  };
  return kClaims;
}

struct Slope {
  std::optional<double> intercept, slope;
  std::optional<stats::Interval> ci;
  std::vector<std::string> validity;
};

// The prompt-length effect at the run's starting speed (the headline model; its average over
// the tested lengths where prefill is curved), else the additive linear fit's.
Slope prompt_slope(const analysis::Analysis& a, const std::string& metric) {
  Slope s;
  for (const auto& m : a.models) {
    if (m.metric != metric || (!m.fit && !m.slowdown)) {
      continue;
    }
    for (const auto& v : m.validity) {
      s.validity.push_back(v.message);
    }
    if (m.slowdown) {
      for (const auto& e : m.slowdown->effects) {
        if (e.term == "prompt_ktokens") {
          s.slope = e.estimate;
          s.ci = e.ci;
        }
      }
      s.intercept = m.slowdown->fit.fit.coefficient(stats::kInterceptName).estimate;
      if (s.slope) {
        continue;
      }
    }
    if (!m.fit) {
      continue;
    }
    for (const auto& c : m.fit->linear.coefficients) {
      if (c.name == "prompt_ktokens") {
        s.slope = c.estimate;
        s.ci = c.ci;
      } else if (c.name == "intercept") {
        s.intercept = c.estimate;
      }
    }
  }
  return s;
}

std::string seconds(double ms) {
  return fmt::format("{:.3g} s", ms / 1000);
}

LabOutcome evaluate_prompt_length(const analysis::RunAnalysis& run) {
  LabOutcome out{"prompt-length", {}, {}, {}, nlohmann::json::object()};
  const auto& a = run.analysis;
  const auto& rows = run.conditions;
  TtftInput ttft;
  const auto t = prompt_slope(a, "ttft_ms");
  ttft.slope_ms_per_ktok = t.slope;
  ttft.slope_ci = t.ci;
  int longest = 0;
  if (!rows.empty() && rows.front().ttft_ms.n > 0 && rows.back().ttft_ms.n > 0) {
    ttft.median_short_ms = rows.front().ttft_ms.median;
    ttft.median_long_ms = rows.back().ttft_ms.median;
    longest = rows.back().prompt_tokens;
    out.measured["ttft_short"] =
        fmt::format("{} at {} tokens", seconds(*ttft.median_short_ms), rows.front().prompt_tokens);
    out.measured["ttft_long"] =
        fmt::format("{} at {} tokens", seconds(*ttft.median_long_ms), longest);
    out.numbers["ttft_median_ms"] = {{"short", *ttft.median_short_ms},
                                     {"long", *ttft.median_long_ms}};
  }
  add_check(out, "ttft_rises", check_ttft_rises(ttft));

  auto d = prompt_slope(a, "server_decode_tps");
  std::string metric = "server decode rate";
  if (!d.slope) {
    d = prompt_slope(a, "decode_tps");
    metric = "client decode rate";
  }
  if (d.intercept && d.slope && d.ci) {
    const double start = *d.intercept;
    out.measured["decode_start"] =
        fmt::format("{:.1f} tok/s ({}, at the run's starting speed)", start, metric);
    out.measured["decode_slope"] =
        fmt::format("{:+.2f} tok/s [95% CI {:+.2f}, {:+.2f}] ({:+.1f}% of the start)", *d.slope,
                    d.ci->lower, d.ci->upper, 100 * *d.slope / start);
    const double drop = -*d.slope * longest / 1000.0;
    out.measured["decode_drop_long"] = fmt::format(
        "{:.1f} tok/s after {} tokens ({:.0f}% of the "
        "start)",
        drop, longest, 100 * drop / start);
    out.numbers["decode"] = {{"metric", metric},
                             {"start_tps", start},
                             {"slope_tps_per_ktok", *d.slope},
                             {"ci", {d.ci->lower, d.ci->upper}},
                             {"drop_at_longest_tps", drop}};
  }
  add_check(out, "decode_falls", check_decode_falls({d.slope, d.ci}));
  for (const auto& v : d.validity) {
    out.notes.push_back(fmt::format("{} fit: {}", metric, v));
  }
  return out;
}

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) {
    return std::nullopt;
  }
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<double> row_ratio(const analysis::PositionSummary& row) {
  return row.prompt_ms_ratio ? row.prompt_ms_ratio : row.ttft_ratio;
}

void add_reuse(LabOutcome& out, const analysis::PositionSummary& row,
               const std::vector<analysis::PairResult>& pairs, std::optional<double> rho) {
  const bool fraction = row.one_minus_f.has_value();
  const auto ratio = row_ratio(row);
  const auto ci = row.prompt_ms_ratio ? row.prompt_ms_ci : row.ttft_ci;
  ReuseInput in{ratio,
                ci,
                row.pairs,
                fraction ? *row.one_minus_f : 0.0,
                !fraction,
                0.10,
                fraction ? rho : std::nullopt};
  const std::string id = "reuse_" + row.edit_position;
  if (ratio) {
    out.measured[id] =
        fmt::format("{:.2f}{} over {} pairs of {} tokens", *ratio,
                    ci ? fmt::format(" [95% CI {:.2f}, {:.2f}]", ci->lower, ci->upper) : "",
                    row.pairs, row.prompt_tokens);
    out.numbers[id] = {{"median_ratio", *ratio}, {"pairs", row.pairs}};
  }
  if (row.edit_position == "question") {
    std::vector<double> cold, second;
    for (const auto& p : pairs) {
      if (p.edit_position == "question" && p.cold_ttft_ms && p.edited_ttft_ms) {
        cold.push_back(*p.cold_ttft_ms);
        second.push_back(*p.edited_ttft_ms);
      }
    }
    if (const auto c = median(cold)) {
      out.measured["question_cold"] =
          fmt::format("{} (median TTFT, {} tokens)", seconds(*c), row.prompt_tokens);
      out.measured["question_second"] = fmt::format("{} (median TTFT)", seconds(*median(second)));
    }
  }
  if (lab_checks("prefix-reuse").end() !=
      std::find_if(lab_checks("prefix-reuse").begin(), lab_checks("prefix-reuse").end(),
                   [&](const auto& c) { return c.first == id; })) {
    add_check(out, id, check_reuse(in));
  }
}

LabOutcome evaluate_prefix_reuse(const analysis::RunAnalysis& run) {
  LabOutcome out{"prefix-reuse", {}, {}, {}, nlohmann::json::object()};
  const auto& pairs = run.prefix.pairs;
  const auto& rows = run.prefix.positions;  // against the lesson's figures
  std::vector<std::pair<double, double>> points;
  for (const auto& row : rows) {
    if (row.one_minus_f && row_ratio(row)) {
      points.emplace_back(1.0 - *row.one_minus_f, *row_ratio(row));
    }
  }
  const auto rho = fit_attention_rho(points);
  if (rho) {
    out.numbers["attention_rho"] = *rho;
  }
  for (const auto& row : rows) {
    add_reuse(out, row, pairs, rho);
  }
  for (const auto& check : lab_checks("prefix-reuse")) {
    const std::string& id = check.first;
    const bool done = std::any_of(out.checks.begin(), out.checks.end(),
                                  [&](const Check& c) { return c.id == id; });
    if (!done) {
      add_check(out, id, check_reuse({}));
    }
  }
  const auto order = lab_checks("prefix-reuse");
  const auto rank = [&](const Check& c) {
    return std::find_if(order.begin(), order.end(),
                        [&](const auto& o) { return o.first == c.id; }) -
           order.begin();
  };
  std::stable_sort(out.checks.begin(), out.checks.end(),
                   [&](const Check& a, const Check& b) { return rank(a) < rank(b); });
  out.notes.push_back(analysis::overall_verdict(rows));
  return out;
}

LabOutcome evaluate_repeated_prompt(const analysis::RunAnalysis& run) {
  LabOutcome out{"repeated-prompt", {}, {}, {}, nlohmann::json::object()};
  TrapInput in;
  const auto& trap = run.prefix.trap;
  if (!trap.empty()) {
    const auto& t = trap.front();
    in = {t.hits, t.cold, t.hit_ttft_ms, t.cold_ttft_ms};
    if (t.cold_ttft_ms) {
      out.measured["resend_cold"] =
          fmt::format("{} (median TTFT of {} cold read{}, {} tokens)", seconds(*t.cold_ttft_ms),
                      t.cold, t.cold == 1 ? "" : "s", t.prompt_tokens);
    }
    out.measured["resend_second"] = fmt::format("{} (median TTFT of {} cached calls, {} tokens)",
                                                seconds(*t.hit_ttft_ms), t.hits, t.prompt_tokens);
  } else {
    in.cold = static_cast<int>(std::count_if(run.calls.begin(), run.calls.end(), [](const auto& r) {
      return analysis::single_timed(r) && r.ok();
    }));
  }
  add_check(out, "trap", check_trap(in));
  return out;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> lab_checks(const std::string& lab) {
  const auto it = claims().find(lab);
  if (it == claims().end()) {
    throw Error(fmt::format("unknown lesson lab '{}'", lab));
  }
  return it->second;
}

void add_check(LabOutcome& out, const std::string& id, CheckResult result) {
  std::string claim;
  for (const auto& [cid, text] : lab_checks(out.lab)) {
    if (cid == id) {
      claim = text;
    }
  }
  out.checks.push_back(Check{id, out.lab, claim, std::move(result), ""});
}

LabOutcome lab_not_run(const std::string& lab, const std::string& why) {
  LabOutcome out{lab, {}, {}, {}, nlohmann::json::object()};
  for (const auto& [id, claim] : lab_checks(lab)) {
    add_check(out, id, CheckResult{Verdict::inconclusive, "", why});
  }
  return out;
}

namespace {

// The memory checks compare logged sizes with the KV arithmetic, which every start repeats; the
// others time calls, which cover the machine only where the run's effects rest on its starts.
LabOutcome with_covers(LabOutcome out, const analysis::RunAnalysis& run) {
  const auto& c = run.analysis.verdict.cover;
  const bool timings_cover_machine = c.machine > 0 && c.this_start == 0;
  for (auto& check : out.checks) {
    const bool arithmetic = check.id == "memory_slope" || check.id == "cache_ratio";
    check.covers = arithmetic || timings_cover_machine ? "machine" : "this_start";
  }
  return out;
}

LabOutcome evaluate_lab_run(const std::string& lab, const analysis::RunAnalysis& run);

}  // namespace

LabOutcome evaluate_lab(const std::string& lab, const analysis::RunAnalysis& run) {
  return with_covers(evaluate_lab_run(lab, run), run);
}

namespace {

LabOutcome evaluate_lab_run(const std::string& lab, const analysis::RunAnalysis& run) {
  if (lab == "prompt-length") {
    return evaluate_prompt_length(run);
  }
  if (lab == "context-window") {
    return evaluate_context_window(run);
  }
  if (lab == "cache-type") {
    return evaluate_cache_type(run);
  }
  if (lab == "prefix-reuse") {
    return evaluate_prefix_reuse(run);
  }
  if (lab == "repeated-prompt") {
    return evaluate_repeated_prompt(run);
  }
  throw Error(fmt::format("unknown lesson lab '{}'", lab));
}

}  // namespace

}  // namespace kvbench::lesson
