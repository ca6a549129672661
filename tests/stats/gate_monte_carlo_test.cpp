// Monte Carlo of the same-session A/B gate (results/README.md, "CI performance gate") in an ABBA
// design: false alarms on identical builds and power against a regression of twice the margin.

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <boost/random/normal_distribution.hpp>
#include <gtest/gtest.h>

#include "harness/stats/gate.h"
#include "harness/stats/ols.h"
#include "simulation.h"

namespace kvbench::stats {
namespace {

constexpr int kGateRuns = 1000;
constexpr double kAlpha = 0.05;
constexpr double kDecodeMargin = 0.05;
constexpr double kTtftMargin = 0.10;

// Default sizes: server sessions A B B A, 30 calls per build (6 blocks of 5 prompt lengths,
// dealt 8/7 over a build's two sessions), 0.5 min apart with a 1-minute restart between
// sessions. On the log scale the decode rate falls 2.7 % per 1000 prompt tokens with 2 % noise
// per call, TTFT grows 35 % per 1000 tokens with 6 % noise. The thermal drift is either
// saturating (levels off at -7 % decode, +5 % TTFT, 10-minute time constant, continuous across
// restarts) or linear over the same range.
const std::vector<int> kAbba{0, 1, 1, 0};
const std::vector<double> kGateLevels{0.5, 1.0, 2.0, 3.0, 4.0};

struct Scenario {
  bool curved_drift = true;
  bool time_squared = false;  // fit t² as well as t
  double decode_ratio = 1.0;  // candidate / baseline decode rate
  double ttft_ratio = 1.0;    // candidate / baseline TTFT
  double decode_margin = kDecodeMargin;
  double ttft_margin = kTtftMargin;
};

struct GateRates {
  double decode_fail = 0.0;        // Holm-corrected, both metrics gated together
  double decode_fail_alone = 0.0;  // decode gated on its own, no correction
  double ttft_fail = 0.0;
  double any_fail = 0.0;
  double all_pass = 0.0;
};

double drift_shape(double t_min, bool curved) {
  return curved ? 1.0 - std::exp(-t_min / 10.0) : t_min / 33.0;
}

GateMetric fitted_metric(const Eigen::MatrixXd& x, const Eigen::VectorXd& log_y, const Scenario& s,
                         const char* name, Better better, double margin) {
  std::vector<std::string> names{"intercept", "prompt_k", "t_min"};
  if (s.time_squared) {
    names.emplace_back("t_min^2");
  }
  names.emplace_back("build=candidate");
  const OlsFit fit = fit_ols(x, log_y, names, {.vif = false});
  const Coefficient& b = fit.coefficient("build=candidate");
  return {name, better, b.estimate, b.se, fit.df, margin};
}

GateDecision simulate_session(const Scenario& s, Rng& rng) {
  boost::random::normal_distribution<double> decode_noise(0.0, 0.02);
  boost::random::normal_distribution<double> ttft_noise(0.0, 0.06);
  const std::vector<sim::Call> calls =
      sim::interleaved_design(kAbba, kGateLevels, 6, 0.5, 1.0, rng);
  const auto n = static_cast<Eigen::Index>(calls.size());
  Eigen::VectorXd log_decode(n);
  Eigen::VectorXd log_ttft(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const sim::Call& c = calls[static_cast<std::size_t>(i)];
    const double drift = drift_shape(c.t_min, s.curved_drift);
    log_decode(i) = std::log(41.0) - 0.027 * c.prompt_k - 0.07 * drift +
                    c.build * std::log(s.decode_ratio) + decode_noise(rng);
    log_ttft(i) = std::log(0.08) + 0.35 * c.prompt_k + 0.05 * drift +
                  c.build * std::log(s.ttft_ratio) + ttft_noise(rng);
  }
  const Eigen::MatrixXd x = sim::design_matrix(calls, true, true, s.time_squared);
  const std::vector<GateMetric> metrics{
      fitted_metric(x, log_decode, s, "decode_tps", Better::higher, s.decode_margin),
      fitted_metric(x, log_ttft, s, "ttft", Better::lower, s.ttft_margin)};
  return gate_metrics(metrics, kAlpha);
}

GateRates simulate_gate(const Scenario& s, std::uint64_t seed) {
  Rng rng(seed);
  GateRates rates;
  for (int run = 0; run < kGateRuns; ++run) {
    const GateDecision d = simulate_session(s, rng);
    rates.decode_fail += d.metrics[0].verdict == Verdict::fail ? 1.0 : 0.0;
    rates.decode_fail_alone += d.metrics[0].p_fail < kAlpha ? 1.0 : 0.0;
    rates.ttft_fail += d.metrics[1].verdict == Verdict::fail ? 1.0 : 0.0;
    rates.any_fail += d.overall == Verdict::fail ? 1.0 : 0.0;
    rates.all_pass += d.overall == Verdict::pass ? 1.0 : 0.0;
  }
  rates.decode_fail /= kGateRuns;
  rates.decode_fail_alone /= kGateRuns;
  rates.ttft_fail /= kGateRuns;
  rates.any_fail /= kGateRuns;
  rates.all_pass /= kGateRuns;
  return rates;
}

void report_rate(const std::string& name, double value) {
  ::testing::Test::RecordProperty(name, std::to_string(value));
  std::cout << "[ monte carlo ] " << name << " = " << value << "\n";
}

TEST(GateMonteCarlo, IdenticalBuildsRarelyFailAndMostlyPassAtDefaultMargins) {
  const GateRates r = simulate_gate({}, 777001);
  report_rate("identical_default_any_fail", r.any_fail);
  report_rate("identical_default_all_pass", r.all_pass);
  EXPECT_LE(r.any_fail, kAlpha + 0.02);
  EXPECT_GT(r.all_pass, 0.9);
}

TEST(GateMonteCarlo, ZeroMarginFailTestIsCalibratedWhenTheDriftModelHolds) {
  // Margin 0 turns FAIL into a plain one-sided t test at α: each metric should fail about 5 %
  // of the time, and Holm keeps the family-wise rate at or below α.
  Scenario s;
  s.curved_drift = false;
  s.decode_margin = 0.0;
  s.ttft_margin = 0.0;
  const GateRates r = simulate_gate(s, 777002);
  report_rate("identical_margin0_linear_drift_decode_fail_alone", r.decode_fail_alone);
  report_rate("identical_margin0_linear_drift_decode_fail", r.decode_fail);
  report_rate("identical_margin0_linear_drift_ttft_fail", r.ttft_fail);
  report_rate("identical_margin0_linear_drift_any_fail", r.any_fail);
  EXPECT_LE(r.any_fail, kAlpha + 0.02);
  EXPECT_GE(r.decode_fail_alone, kAlpha - 0.02);
  EXPECT_LE(r.decode_fail_alone, kAlpha + 0.02);
  EXPECT_GE(r.decode_fail, 0.01);
  EXPECT_LE(r.decode_fail, kAlpha + 0.02);
  EXPECT_GE(r.ttft_fail, 0.01);
  EXPECT_LE(r.ttft_fail, kAlpha + 0.02);
}

TEST(GateMonteCarlo, CurvedDriftInAbbaNeedsTheMarginOrATSquaredTerm) {
  // In A B B A the build contrast (ends vs middle) is the quadratic contrast of time, so a
  // levelling-off drift fitted by a straight line reads as a slower candidate.
  Scenario s;
  s.decode_margin = 0.0;
  s.ttft_margin = 0.0;
  const GateRates linear = simulate_gate(s, 777003);
  s.time_squared = true;
  const GateRates quadratic = simulate_gate(s, 777004);
  report_rate("identical_margin0_curved_drift_t_any_fail", linear.any_fail);
  report_rate("identical_margin0_curved_drift_t2_any_fail", quadratic.any_fail);
  EXPECT_GT(linear.any_fail, 0.2);
  EXPECT_LE(quadratic.any_fail, kAlpha + 0.02);
}

TEST(GateMonteCarlo, DecodeRegressionOfTwiceTheMarginIsCaught) {
  Scenario s;
  s.decode_ratio = 1.0 - 2.0 * kDecodeMargin;
  const GateRates r = simulate_gate(s, 777005);
  report_rate("decode_regression_power", r.decode_fail);
  report_rate("decode_regression_ttft_fail", r.ttft_fail);
  EXPECT_GT(r.decode_fail, 0.8);
  EXPECT_LE(r.ttft_fail, kAlpha + 0.02);
}

TEST(GateMonteCarlo, TtftRegressionOfTwiceTheMarginIsCaught) {
  Scenario s;
  s.ttft_ratio = 1.0 + 2.0 * kTtftMargin;
  const GateRates r = simulate_gate(s, 777006);
  report_rate("ttft_regression_power", r.ttft_fail);
  report_rate("ttft_regression_decode_fail", r.decode_fail);
  EXPECT_GT(r.ttft_fail, 0.8);
  EXPECT_LE(r.decode_fail, kAlpha + 0.02);
  s.time_squared = true;
  report_rate("ttft_regression_power_with_t2", simulate_gate(s, 777007).ttft_fail);
}

}  // namespace
}  // namespace kvbench::stats
