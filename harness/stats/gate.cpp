#include "harness/stats/gate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"

namespace kvbench::stats {
namespace {

void validate_metric(const GateMetric& m, double alpha) {
  if (!(m.se > 0.0) || !(m.df > 0.0) || !(m.margin > -1.0) || !std::isfinite(m.gamma)) {
    throw Error("gate: metric '" + m.metric + "' needs a finite γ, SE > 0, df > 0, margin > -1");
  }
  if (!(alpha > 0.0 && alpha < 0.5)) {
    throw Error("gate: alpha must be in (0, 0.5)");
  }
}

Verdict verdict_of(const GateResult& r) {
  if (r.p_fail < r.holm_alpha) {
    return Verdict::fail;
  }
  if (r.slowdown_upper < r.margin) {
    return Verdict::pass;
  }
  return Verdict::inconclusive;
}

}  // namespace

GateResult gate_metric(const GateMetric& metric, double alpha) {
  validate_metric(metric, alpha);
  GateResult r;
  r.metric = metric.metric;
  r.better = metric.better;
  r.slowdown = metric.better == Better::higher ? -metric.gamma : metric.gamma;
  r.se = metric.se;
  r.df = metric.df;
  r.margin = metric.margin;
  r.alpha = alpha;
  r.t_critical = t_quantile(1.0 - alpha, metric.df);
  r.lower = r.slowdown - r.t_critical * r.se;
  r.upper = r.slowdown + r.t_critical * r.se;
  r.slowdown_lower = std::expm1(r.lower);
  r.slowdown_upper = std::expm1(r.upper);
  const double t = (r.slowdown - std::log1p(metric.margin)) / r.se;
  r.p_fail = 1.0 - t_cdf(t, metric.df);
  r.holm_alpha = alpha;
  r.verdict = verdict_of(r);
  return r;
}

GateDecision gate_metrics(std::span<const GateMetric> metrics, double alpha) {
  if (metrics.empty()) {
    throw Error("gate: no metrics to gate");
  }
  GateDecision d;
  d.alpha = alpha;
  for (const GateMetric& m : metrics) {
    d.metrics.push_back(gate_metric(m, alpha));
  }
  std::vector<std::size_t> order(d.metrics.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return d.metrics[a].p_fail < d.metrics[b].p_fail;
  });
  const double m = static_cast<double>(order.size());
  bool stopped = false;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    GateResult& r = d.metrics[order[rank]];
    r.holm_alpha = stopped ? 0.0 : alpha / (m - static_cast<double>(rank));
    stopped = stopped || !(r.p_fail < r.holm_alpha);
    r.verdict = verdict_of(r);
  }
  const auto all = [&](Verdict v) {
    return std::all_of(d.metrics.begin(), d.metrics.end(),
                       [v](const GateResult& r) { return r.verdict == v; });
  };
  const bool any_fail = std::any_of(d.metrics.begin(), d.metrics.end(),
                                    [](const GateResult& r) { return r.verdict == Verdict::fail; });
  d.overall =
      any_fail ? Verdict::fail : (all(Verdict::pass) ? Verdict::pass : Verdict::inconclusive);
  return d;
}

HistoryGateResult history_gate(std::span<const double> history, double value, Better better,
                               double margin, double quantile, std::size_t min_history) {
  if (!(quantile > 0.5 && quantile < 1.0) || !std::isfinite(value) || !std::isfinite(margin)) {
    throw Error("history_gate: need a quantile in (0.5, 1) and finite value and margin");
  }
  HistoryGateResult r;
  r.n = history.size();
  r.value = value;
  r.margin = margin;
  r.better = better;
  r.quantile = quantile;
  if (r.n < std::max<std::size_t>(min_history, 2)) {
    r.verdict = Verdict::inconclusive;
    return r;
  }
  const auto n = static_cast<double>(r.n);
  r.mean = mean(history);
  r.sd = sample_sd(history);
  r.t_critical = t_quantile(quantile, n - 1.0);
  const double half = r.t_critical * r.sd * std::sqrt(1.0 + 1.0 / n);
  r.lower = r.mean - half;
  r.upper = r.mean + half;
  const bool higher = better == Better::higher;
  r.outside_interval = higher ? value < r.lower : value > r.upper;
  r.beyond_margin = higher ? value < r.mean * (1.0 - margin) : value > r.mean * (1.0 + margin);
  r.verdict = r.outside_interval && r.beyond_margin ? Verdict::fail : Verdict::pass;
  return r;
}

void to_json(nlohmann::json& j, const GateResult& r) {
  j = {{"metric", r.metric},
       {"better", r.better},
       {"slowdown", r.slowdown},
       {"se", r.se},
       {"df", r.df},
       {"margin", r.margin},
       {"alpha", r.alpha},
       {"t_critical", r.t_critical},
       {"lower", r.lower},
       {"upper", r.upper},
       {"slowdown_lower", r.slowdown_lower},
       {"slowdown_upper", r.slowdown_upper},
       {"p_fail", r.p_fail},
       {"holm_alpha", r.holm_alpha},
       {"verdict", r.verdict}};
}

void to_json(nlohmann::json& j, const GateDecision& d) {
  j = {{"metrics", d.metrics},
       {"alpha", d.alpha},
       {"correction", "Holm across the FAIL tests"},
       {"overall", d.overall}};
}

void to_json(nlohmann::json& j, const HistoryGateResult& r) {
  j = {{"n", r.n},
       {"mean", r.mean},
       {"sd", r.sd},
       {"quantile", r.quantile},
       {"t_critical", r.t_critical},
       {"lower", r.lower},
       {"upper", r.upper},
       {"value", r.value},
       {"margin", r.margin},
       {"better", r.better},
       {"outside_interval", r.outside_interval},
       {"beyond_margin", r.beyond_margin},
       {"verdict", r.verdict}};
}

}  // namespace kvbench::stats
