#include "harness/gate/history_gate.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/gate/decision.h"
#include "harness/stats/descriptive.h"
#include "harness/stats/distributions.h"

namespace kvbench::gate {

namespace {

stats::Better better_of(const std::string& metric) {
  const auto* m = analysis::metric_named(metric);
  return m != nullptr ? m->better : stats::Better::higher;
}

HistoryEntry start(const SessionValue& v, double margin, std::size_t n) {
  HistoryEntry e;
  e.metric = v.metric;
  e.condition = condition_label(v.where);
  e.variant = v.variant;
  e.better = better_of(v.metric);
  e.margin = margin;
  e.value = v.value;
  e.history_n = n;
  return e;
}

bool too_few(HistoryEntry& e, std::size_t min_history) {
  if (e.history_n >= std::max<std::size_t>(min_history, 2)) {
    return false;
  }
  e.verdict = stats::Verdict::inconclusive;
  e.reason = fmt::format("{} earlier sessions in the history, {} needed", e.history_n,
                         std::max<std::size_t>(min_history, 2));
  return true;
}

}  // namespace

HistoryEntry history_entry(const SessionValue& value, std::span<const double> history,
                           double margin, double quantile, std::size_t min_history) {
  HistoryEntry e = start(value, margin, history.size());
  if (!std::isfinite(value.value)) {
    e.reason = "no session value: " + value.error;
    return e;
  }
  if (too_few(e, min_history)) {
    return e;
  }
  const auto r = stats::history_gate(history, value.value, e.better, margin, quantile, min_history);
  e.reference = r.mean;
  e.history_sd = r.sd;
  e.limit = e.better == stats::Better::higher ? r.lower : r.upper;
  e.verdict = r.verdict;
  return e;
}

HistoryEntry compare_sessions(const SessionValue& baseline, const SessionValue& candidate,
                              std::span<const double> history, double margin, double quantile,
                              std::size_t min_history) {
  HistoryEntry e = start(candidate, margin, history.size());
  e.reference = baseline.value;
  if (!std::isfinite(candidate.value) || !std::isfinite(baseline.value)) {
    e.reason = "no session value: " + (candidate.error.empty() ? baseline.error : candidate.error);
    return e;
  }
  if (too_few(e, min_history)) {
    return e;
  }
  std::vector<double> logs;
  for (double h : history) {
    logs.push_back(std::log(h));
  }
  e.history_sd = stats::sample_sd(logs);
  const double n = static_cast<double>(logs.size());
  const double half = stats::t_quantile(quantile, n - 1.0) * e.history_sd * std::sqrt(2.0);
  const bool higher = e.better == stats::Better::higher;
  const double s = (higher ? -1.0 : 1.0) * (std::log(candidate.value) - std::log(baseline.value));
  e.limit = baseline.value * std::exp(higher ? -half : half);
  const bool outside = s > half;
  const bool beyond = std::expm1(s) > margin;
  e.verdict = outside && beyond ? stats::Verdict::fail : stats::Verdict::pass;
  return e;
}

std::vector<ReportRow> history_rows(const std::vector<HistoryEntry>& entries,
                                    const std::string& comparison) {
  std::vector<ReportRow> rows;
  for (const auto& e : entries) {
    ReportRow row;
    row.metric = e.metric;
    row.condition = e.condition;
    row.comparison = e.variant.empty() ? comparison : comparison + " [" + e.variant + "]";
    row.verdict = e.verdict;
    row.reason = e.reason;
    if (e.reference > 0.0 && e.history_sd > 0.0) {
      row.numbers = fmt::format(
          "{:.4g} vs {:.4g}: change {:+.1f} %; worse-side limit {:.4g} ({}), margin {:.1f} % "
          "(history n={}, q=0.99)",
          e.value, e.reference, 100 * (e.value / e.reference - 1), e.limit,
          e.better == stats::Better::higher ? "lower is worse" : "higher is worse", 100 * e.margin,
          e.history_n);
    } else {
      row.numbers = fmt::format("value {:.4g} (history n={}, margin {:.1f} %)", e.value,
                                e.history_n, 100 * e.margin);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void to_json(nlohmann::json& j, const HistoryEntry& e) {
  j = {{"metric", e.metric},         {"condition", e.condition}, {"variant", e.variant},
       {"better", e.better},         {"margin", e.margin},       {"value", e.value},
       {"reference", e.reference},   {"limit", e.limit},         {"history_n", e.history_n},
       {"history_sd", e.history_sd}, {"verdict", e.verdict},     {"reason", e.reason}};
}

}  // namespace kvbench::gate
