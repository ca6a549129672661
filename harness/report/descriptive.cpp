// The "Descriptive statistics" section of a run's report: each condition's metrics, with a
// column for each server setting that varies (a variant, a batch size).

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/report/sections.h"

namespace kvbench::report {

namespace {

// The server settings that vary by condition, one column each where a condition has one.
// Their headers go to `head`, their rules to `rule`.
std::vector<std::string (*)(const analysis::ConditionStats&)> setting_columns(
    const analysis::Analysis& a, std::string& head, std::string& rule) {
  using C = const analysis::ConditionStats&;
  const std::pair<const char*, std::string (*)(C)> all[] = {
      {"variant", [](C c) { return c.variant; }},
      {"batch", [](C c) { return c.batch_size ? std::to_string(*c.batch_size) : ""; }},
      {"ubatch", [](C c) { return c.ubatch_size ? std::to_string(*c.ubatch_size) : ""; }}};
  std::vector<std::string (*)(C)> out;
  for (const auto& [name, value] : all) {
    if (std::any_of(a.conditions.begin(), a.conditions.end(),
                    [v = value](C c) { return !v(c).empty(); })) {
      head += fmt::format("| {} ", name);
      rule += "|---";
      out.push_back(value);
    }
  }
  return out;
}

}  // namespace

void write_descriptive_markdown(std::ostream& out, const analysis::Analysis& a) {
  out << "\n### Descriptive statistics\n\nMedian [95% bootstrap CI], mean ± sd, CV; outliers are "
         "flagged (Tukey fences, modified z > 10), never dropped.\n\n";
  std::string head;
  std::string rule;
  const auto settings = setting_columns(a, head, rule);
  out << head
      << "| num_ctx | cache | prompt tokens | metric | n | median [95% CI] | mean ± sd | CV | "
         "p05-p95 | outliers | slow first |\n"
      << rule << "|---:|---|---:|---|---:|---|---|---:|---|---:|---|\n";
  for (const auto& c : a.conditions) {
    for (const auto& [key, s] : c.metrics) {
      const auto* metric = analysis::metric_named(key);
      const int pr = metric != nullptr && metric->unit != "ms" ? 2 : 1;
      for (const auto value : settings) {
        out << "| " << value(c) << " ";
      }
      out << fmt::format(
          "| {} | {} | {} | {} | {} | {:.{}f} [{:.{}f}, {:.{}f}] | {:.{}f} ± {:.{}f} | {:.1f}% | "
          "{:.{}f}-{:.{}f} | {} | {} |\n",
          c.num_ctx, c.cache_type, c.prompt_tokens, key, s.n, s.median, pr, s.median_ci.lower, pr,
          s.median_ci.upper, pr, s.mean, pr, std::isnan(s.sd) ? 0.0 : s.sd, pr,
          std::isnan(s.cv) ? 0.0 : 100 * s.cv, s.p05, pr, s.p95, pr, s.outliers.size(),
          s.slow_first ? "yes" : "no");
    }
  }
}

}  // namespace kvbench::report
