#pragma once
// Gate arithmetic of results/README.md ("CI performance gate"), as pure functions.
//
// Same-session A/B gate: for each metric, the build coefficient γ of log(metric) ~ build + ...
// (build 0 = baseline, 1 = candidate) becomes a slowdown s (positive = worse): s = -γ when
// higher is better (decode tok/s), s = +γ when lower is better (TTFT). With the one-sided level
// α, [lo, hi] = s ∓ t_{1-α,df}·SE (the two-sided 1-2α CI) and L, H = exp(lo) - 1, exp(hi) - 1:
//   H < margin -> PASS; L > margin -> FAIL; otherwise INCONCLUSIVE.
// Across metrics, FAIL is a union of one-sided tests (H0: s <= log(1+margin)), so it is
// Holm-corrected: p-values sorted ascending, the i-th (1-based) of m must be below α/(m-i+1),
// stopping at the first that is not. PASS needs every metric to pass, an intersection-union
// test that keeps level α without correction (Berger 1982), so PASS uses the unadjusted bound.
//
// History gate (no same-session baseline): with the last n session values, mean m and SD s,
// the prediction interval is m ± t_{n-1}(q)·s·sqrt(1 + 1/n), q = 0.99 by default (the
// q-quantile on each side, as Bencher's t-test threshold). FAIL if the new value lies outside
// the interval on the worse side AND is worse than the mean by more than the margin.

#include <cstddef>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stats/descriptive.h"

namespace kvbench::stats {

enum class Verdict { pass, fail, inconclusive };
NLOHMANN_JSON_SERIALIZE_ENUM(Verdict, {{Verdict::pass, "PASS"},
                                       {Verdict::fail, "FAIL"},
                                       {Verdict::inconclusive, "INCONCLUSIVE"}})

// The verdict of several: FAIL if any fails, else INCONCLUSIVE if any is (or there are none),
// else PASS. `entries` holds anything with a `verdict` member.
template <typename Entries>
Verdict overall_verdict(const Entries& entries) {
  bool inconclusive = std::empty(entries);
  for (const auto& e : entries) {
    if (e.verdict == Verdict::fail) {
      return Verdict::fail;
    }
    inconclusive = inconclusive || e.verdict == Verdict::inconclusive;
  }
  return inconclusive ? Verdict::inconclusive : Verdict::pass;
}

struct GateMetric {
  std::string metric;  // e.g. "decode_tps"
  Better better = Better::higher;
  double gamma = 0.0;    // build coefficient of the log model (candidate vs baseline)
  double se = 0.0;       // its standard error (> 0)
  double df = 0.0;       // residual degrees of freedom of that fit (> 0)
  double margin = 0.05;  // tolerated relative slowdown, e.g. 0.05 for 5 %
};

struct GateResult {
  std::string metric;
  Better better = Better::higher;
  double slowdown = 0.0;  // s, log scale, positive = worse
  double se = 0.0;
  double df = 0.0;
  double margin = 0.0;
  double alpha = 0.0;           // one-sided
  double t_critical = 0.0;      // t_{1-α, df}
  double lower = 0.0;           // lo, log scale
  double upper = 0.0;           // hi, log scale
  double slowdown_lower = 0.0;  // L = exp(lo) - 1
  double slowdown_upper = 0.0;  // H = exp(hi) - 1
  double p_fail = 0.0;          // one-sided p of H0: s <= log(1 + margin)
  double holm_alpha = 0.0;  // level of the FAIL test: α alone; 0 where the Holm step-down stopped
  Verdict verdict = Verdict::inconclusive;
};

struct GateDecision {
  std::vector<GateResult> metrics;
  double alpha = 0.0;
  Verdict overall = Verdict::inconclusive;  // FAIL if any fails, PASS if all pass
};

// One metric without multiplicity correction. Throws kvbench::Error for se <= 0, df <= 0,
// margin <= -1 or α outside (0, 0.5).
GateResult gate_metric(const GateMetric& metric, double alpha = 0.05);

// Several metrics with the Holm correction of the FAIL tests. Throws as gate_metric; an empty
// list throws too.
GateDecision gate_metrics(std::span<const GateMetric> metrics, double alpha = 0.05);

struct HistoryGateResult {
  std::size_t n = 0;
  double mean = 0.0;
  double sd = 0.0;
  double quantile = 0.0;    // q
  double t_critical = 0.0;  // t_{n-1}(q)
  double lower = 0.0;       // prediction interval
  double upper = 0.0;
  double value = 0.0;
  double margin = 0.0;
  Better better = Better::higher;
  bool outside_interval = false;            // on the worse side
  bool beyond_margin = false;               // worse than the mean by more than the margin
  Verdict verdict = Verdict::inconclusive;  // INCONCLUSIVE with fewer than min_history values
};

// History gate for one new session value against earlier session values. Throws
// kvbench::Error for q outside (0.5, 1) or non-finite values.
HistoryGateResult history_gate(std::span<const double> history, double value, Better better,
                               double margin, double quantile = 0.99, std::size_t min_history = 10);

void to_json(nlohmann::json& j, const GateResult& r);
void to_json(nlohmann::json& j, const GateDecision& d);
void to_json(nlohmann::json& j, const HistoryGateResult& r);

}  // namespace kvbench::stats
