#include "harness/stats/gate.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"

namespace kvbench::stats {
namespace {

// Expected values computed with mpmath at 40 digits: t_{0.95}(30) = 1.6972608865939578.
TEST(Gate, PassWhenThePessimisticBoundIsInsideTheMargin) {
  const GateResult r = gate_metric({"decode_tps", Better::higher, -0.02, 0.01, 30, 0.05});
  EXPECT_DOUBLE_EQ(r.slowdown, 0.02);
  EXPECT_NEAR(r.t_critical, 1.6972608865939578, 1e-13);
  EXPECT_NEAR(r.lower, 0.0030273911340604215, 1e-14);
  EXPECT_NEAR(r.upper, 0.036972608865939578, 1e-14);
  EXPECT_NEAR(r.slowdown_lower, 0.0030319783104907338, 1e-14);
  EXPECT_NEAR(r.slowdown_upper, 0.037664597638783341, 1e-14);
  EXPECT_NEAR(r.p_fail, 0.99635539132905269, 1e-12);
  EXPECT_EQ(r.verdict, Verdict::pass);
}

TEST(Gate, FailWhenTheOptimisticBoundExceedsTheMargin) {
  const GateResult r = gate_metric({"decode_tps", Better::higher, -0.15, 0.02, 30, 0.05});
  EXPECT_NEAR(r.slowdown_lower, 0.12305739407936103, 1e-13);
  EXPECT_NEAR(r.slowdown_upper, 0.20194997574684515, 1e-13);
  EXPECT_NEAR(r.p_fail, 9.8192299889561175e-6, 1e-15);
  EXPECT_EQ(r.verdict, Verdict::fail);
}

TEST(Gate, InconclusiveInBetween) {
  const GateResult r = gate_metric({"decode_tps", Better::higher, -0.05, 0.02, 30, 0.05});
  EXPECT_NEAR(r.slowdown_lower, 0.016184352764962186, 1e-13);
  EXPECT_NEAR(r.slowdown_upper, 0.087569312663159594, 1e-13);
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
}

TEST(Gate, LowerIsBetterMetricsUseThePositiveCoefficient) {
  EXPECT_EQ(gate_metric({"ttft", Better::lower, 0.15, 0.02, 30, 0.10}).verdict, Verdict::fail);
  EXPECT_EQ(gate_metric({"ttft", Better::lower, -0.15, 0.02, 30, 0.10}).verdict, Verdict::pass);
  EXPECT_EQ(gate_metric({"decode_tps", Better::higher, 0.15, 0.02, 30, 0.05}).verdict,
            Verdict::pass);  // faster is never a failure
}

// A metric whose one-sided FAIL p-value is exactly p at margin 0.
GateMetric with_p_fail(const char* name, double p) {
  return {name, Better::lower, t_quantile(1.0 - p, 40) * 0.01, 0.01, 40, 0.0};
}

TEST(Gate, HolmCorrectsTheFailTests) {
  EXPECT_EQ(gate_metric(with_p_fail("a", 0.04)).verdict, Verdict::fail);
  const std::vector<GateMetric> both_04{with_p_fail("a", 0.04), with_p_fail("b", 0.04)};
  const GateDecision d1 = gate_metrics(both_04);
  EXPECT_EQ(d1.metrics[0].verdict, Verdict::inconclusive);
  EXPECT_EQ(d1.metrics[1].verdict, Verdict::inconclusive);
  EXPECT_DOUBLE_EQ(d1.metrics[0].holm_alpha, 0.025);
  EXPECT_DOUBLE_EQ(d1.metrics[1].holm_alpha, 0.0);  // the step-down stopped before it
  EXPECT_EQ(d1.overall, Verdict::inconclusive);
  const std::vector<GateMetric> step{with_p_fail("a", 0.04), with_p_fail("b", 0.01)};
  const GateDecision d2 = gate_metrics(step);
  EXPECT_DOUBLE_EQ(d2.metrics[1].holm_alpha, 0.025);
  EXPECT_DOUBLE_EQ(d2.metrics[0].holm_alpha, 0.05);
  EXPECT_EQ(d2.metrics[0].verdict, Verdict::fail);
  EXPECT_EQ(d2.metrics[1].verdict, Verdict::fail);
  EXPECT_EQ(d2.overall, Verdict::fail);
  const std::vector<GateMetric> stop{with_p_fail("a", 0.06), with_p_fail("b", 0.01)};
  const GateDecision d3 = gate_metrics(stop);
  EXPECT_EQ(d3.metrics[1].verdict, Verdict::fail);
  EXPECT_NE(d3.metrics[0].verdict, Verdict::fail);
  EXPECT_EQ(d3.overall, Verdict::fail);
}

TEST(Gate, OverallPassNeedsEveryMetricToPass) {
  const std::vector<GateMetric> ok{{"decode_tps", Better::higher, -0.01, 0.01, 50, 0.05},
                                   {"ttft", Better::lower, 0.01, 0.02, 50, 0.10}};
  EXPECT_EQ(gate_metrics(ok).overall, Verdict::pass);
  const std::vector<GateMetric> mixed{{"decode_tps", Better::higher, -0.01, 0.01, 50, 0.05},
                                      {"ttft", Better::lower, 0.08, 0.02, 50, 0.10}};
  EXPECT_EQ(gate_metrics(mixed).overall, Verdict::inconclusive);
}

TEST(Gate, RejectsBadInput) {
  EXPECT_THROW(gate_metric({"x", Better::higher, 0.0, 0.0, 30, 0.05}), Error);
  EXPECT_THROW(gate_metric({"x", Better::higher, 0.0, 0.01, 0, 0.05}), Error);
  EXPECT_THROW(gate_metric({"x", Better::higher, 0.0, 0.01, 30, 0.05}, 0.6), Error);
  EXPECT_THROW(gate_metrics({}), Error);
}

// History: mean 100, SD 1.7638342073763937, t_9(0.99) = 2.8214379250258088,
// PI = [94.780551662664409, 105.21944833733559] (mpmath).
const std::vector<double> kHistory{100, 102, 98, 101, 99, 100, 103, 97, 100, 100};

TEST(HistoryGate, PredictionIntervalMatchesFormula) {
  const HistoryGateResult r = history_gate(kHistory, 100.0, Better::higher, 0.05);
  EXPECT_DOUBLE_EQ(r.mean, 100.0);
  EXPECT_NEAR(r.sd, 1.7638342073763937, 1e-13);
  EXPECT_NEAR(r.t_critical, 2.8214379250258088, 1e-13);
  EXPECT_NEAR(r.lower, 94.780551662664409, 1e-11);
  EXPECT_NEAR(r.upper, 105.21944833733559, 1e-11);
  EXPECT_EQ(r.verdict, Verdict::pass);
}

TEST(HistoryGate, FailsOnlyOutsideTheIntervalAndBeyondTheMargin) {
  EXPECT_EQ(history_gate(kHistory, 94.5, Better::higher, 0.05).verdict, Verdict::fail);
  const HistoryGateResult wide = history_gate(kHistory, 94.5, Better::higher, 0.10);
  EXPECT_TRUE(wide.outside_interval);
  EXPECT_FALSE(wide.beyond_margin);
  EXPECT_EQ(wide.verdict, Verdict::pass);
  EXPECT_EQ(history_gate(kHistory, 106.0, Better::higher, 0.05).verdict, Verdict::pass);
  EXPECT_EQ(history_gate(kHistory, 106.0, Better::lower, 0.05).verdict, Verdict::fail);
}

TEST(HistoryGate, TooLittleHistoryIsInconclusive) {
  const std::vector<double> short_history(kHistory.begin(), kHistory.begin() + 9);
  EXPECT_EQ(history_gate(short_history, 50.0, Better::higher, 0.05).verdict, Verdict::inconclusive);
  EXPECT_THROW(history_gate(kHistory, 50.0, Better::higher, 0.05, 0.3), Error);
}

TEST(Gate, JsonCarriesVerdictsAndBounds) {
  const std::vector<GateMetric> m{{"decode_tps", Better::higher, -0.02, 0.01, 30, 0.05}};
  const nlohmann::json j = gate_metrics(m);
  EXPECT_EQ(j.at("overall"), "PASS");
  EXPECT_EQ(j.at("metrics").at(0).at("verdict"), "PASS");
  EXPECT_EQ(j.at("metrics").at(0).at("better"), "higher");
  const nlohmann::json h = history_gate(kHistory, 94.5, Better::higher, 0.05);
  EXPECT_EQ(h.at("verdict"), "FAIL");
}

}  // namespace
}  // namespace kvbench::stats
