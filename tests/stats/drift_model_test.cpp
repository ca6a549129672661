// The multiplicative drift model: exact recovery, coverage under a smooth slow-down, what an
// additive time term does to the same data, nested F tests and a step it cannot fit.

#include "harness/stats/drift_model.h"

#include <cmath>
#include <vector>

#include <boost/random/normal_distribution.hpp>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/stats/ols.h"
#include "simulation.h"

namespace kvbench::stats {
namespace {

// Prefill in ms: 40 ms + 1,300 ms per 1,000 tokens + 250 ms per (1,000 tokens)².
double prefill_ms(double k) {
  return 40.0 + 1300.0 * k + 250.0 * k * k;
}

struct Run {
  Eigen::MatrixXd x;  // 1, L, L²
  Eigen::MatrixXd t;  // t
  Eigen::VectorXd y;
  Eigen::MatrixXd x_linear;  // 1, L, t: the additive model
  std::vector<double> lengths;
};

// Eight blocks of five shuffled prompt lengths, one call every 0.2 minutes; each call takes
// slow(t) times as long and has `noise` relative spread.
template <typename Slow>
Run simulate(std::uint64_t seed, double noise, Slow slow) {
  Rng rng(seed);
  boost::random::normal_distribution<double> e(0.0, noise);
  const auto levels = sim::blocked_levels({0.25, 0.5, 1.0, 1.5, 2.0}, 8, rng);
  const auto n = static_cast<Eigen::Index>(levels.size());
  Run r;
  r.x.resize(n, 3);
  r.t.resize(n, 1);
  r.y.resize(n);
  r.x_linear.resize(n, 3);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double k = levels[static_cast<std::size_t>(i)];
    const double t = 0.2 * static_cast<double>(i);
    r.x.row(i) << 1.0, k, k * k;
    r.t(i, 0) = t;
    r.x_linear.row(i) << 1.0, k, t;
    r.y(i) = prefill_ms(k) * slow(t) * (1.0 + e(rng));
    r.lengths.push_back(k);
  }
  return r;
}

const std::vector<std::string> kShape = {"intercept", "prompt_ktokens", "prompt_ktokens^2"};
const std::vector<std::string> kTime = {"t_min"};

TEST(DriftModel, RecoversAnExactSlowDown) {
  const auto r = simulate(1, 0.0, [](double t) { return std::exp(0.03 * t); });
  const auto f = fit_drift(r.x, kShape, r.t, kTime, r.y);
  EXPECT_TRUE(f.converged);
  EXPECT_NEAR(f.fit.coefficient("intercept").estimate, 40.0, 1e-6);
  EXPECT_NEAR(f.fit.coefficient("prompt_ktokens").estimate, 1300.0, 1e-6);
  EXPECT_NEAR(f.fit.coefficient("prompt_ktokens^2").estimate, 250.0, 1e-6);
  EXPECT_NEAR(f.fit.coefficient("t_min").estimate, 0.03, 1e-10);
  EXPECT_NEAR(f.slow_down(7.8), std::exp(0.03 * 7.8), 1e-9);
  EXPECT_LT(f.fit.rss, 1e-12);
}

TEST(DriftModel, SmoothSlowDownLeavesTheSlopeWhereAnAdditiveTermMovesIt) {
  // A 40 % smooth slow-down over the run: the additive time term cannot make long prompts
  // proportionally slower, and its slope moves; the multiplicative model's does not.
  const auto slow = [](double t) { return 1.0 + 0.4 * t / 7.8; };
  const auto r = simulate(7, 0.01, slow);
  const auto drift = fit_drift_smooth(r.x, kShape, r.t.col(0), r.y, 3);
  // Average cost per 1,000 tokens over 250-2,000 tokens: b + c·(0.25 + 2).
  Eigen::VectorXd secant = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(drift.fit.p));
  secant.head(3) << 0, 1, 2.25;
  const auto s = drift.combination(secant);
  const double truth = 1300.0 + 250.0 * 2.25;
  EXPECT_LT(s.ci.lower, truth);
  EXPECT_GT(s.ci.upper, truth);
  EXPECT_LT(std::abs(s.estimate / truth - 1), 0.05);
  const auto additive = fit_ols(r.x_linear, r.y, {"intercept", "prompt_ktokens", "t_min"});
  const double moved = additive.coefficient("prompt_ktokens").estimate / truth - 1;
  EXPECT_GT(std::abs(moved), 0.10) << "the additive slope moved by " << 100 * moved << " %";
  EXPECT_NEAR(drift.slow_down(7.8), 1.4, 0.05);
}

// The 95 % CI of the average cost per 1,000 tokens over 250 simulated runs with 2 % noise.
template <typename Slow>
std::pair<double, double> coverage_and_bias(Slow slow) {
  const double truth = 1300.0 + 250.0 * 2.25;
  int covered = 0;
  double bias = 0;
  const int runs = 250;
  for (int i = 0; i < runs; ++i) {
    const auto r = simulate(1000 + static_cast<std::uint64_t>(i), 0.02, slow);
    const auto f = fit_drift_smooth(r.x, kShape, r.t.col(0), r.y, 3);
    Eigen::VectorXd a = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(f.fit.p));
    a.head(3) << 0, 1, 2.25;
    const auto c = f.combination(a);
    covered += c.ci.lower <= truth && truth <= c.ci.upper ? 1 : 0;
    bias += c.estimate / truth - 1;
  }
  return {covered / static_cast<double>(runs), bias / runs};
}

TEST(DriftModel, CoverageUnderASlowDownTheBasisCanFollow) {
  // Speeding up 2 %, then slowing down: log g = 0.08·t - 0.006·t², within the basis.
  const auto [coverage, bias] =
      coverage_and_bias([](double t) { return std::exp(0.08 * t - 0.006 * t * t); });
  EXPECT_GT(coverage, 0.90);
  EXPECT_LT(coverage, 0.98);
  EXPECT_LT(std::abs(bias), 0.002);
  const auto [quiet, quiet_bias] = coverage_and_bias([](double) { return 1.0; });
  EXPECT_GT(quiet, 0.90);
  EXPECT_LT(quiet, 0.98);
  EXPECT_LT(std::abs(quiet_bias), 0.002);
}

TEST(DriftModel, ALinearRampOfFortyPercentBiasesTheStartBelowOnePercent) {
  // 1 + 0.4·t/T is outside the basis: the start is extrapolated from a curve that only
  // approaches it. Measured here with 400 runs: coverage 0.85, bias +0.4 %.
  const auto [coverage, bias] = coverage_and_bias([](double t) { return 1.0 + 0.4 * t / 7.8; });
  EXPECT_GT(coverage, 0.75);
  EXPECT_LT(std::abs(bias), 0.01);
}

DriftFit saturated(const Run& r) {
  // One column per prompt length: the cell means, times the same g(t).
  const std::vector<double> cells = {0.25, 0.5, 1.0, 1.5, 2.0};
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(r.y.size(), 5);
  std::vector<std::string> names;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    names.push_back("cell" + std::to_string(c));
    for (Eigen::Index i = 0; i < r.y.size(); ++i) {
      x(i, static_cast<Eigen::Index>(c)) = r.lengths[static_cast<std::size_t>(i)] == cells[c];
    }
  }
  return fit_drift_smooth(x, names, r.t.col(0), r.y, 3);
}

TEST(DriftModel, LackOfFitFindsAMissingQuadraticTermAndPureErrorIsTheNoise) {
  const auto r = simulate(11, 0.01, [](double t) { return std::exp(0.02 * t); });
  const auto full = saturated(r);
  EXPECT_NEAR(full.relative_residual_sd, 0.01, 0.004) << "pure error is the planted noise";
  // The same time basis on both sides of each test.
  const int d = static_cast<int>(full.time_names.size());
  const auto t = time_basis(r.t.col(0), d);
  const auto linear =
      fit_drift(r.x.leftCols(2), {"intercept", "prompt_ktokens"}, t, time_basis_names(d), r.y);
  const auto quadratic = fit_drift(r.x, kShape, t, time_basis_names(d), r.y);
  const auto lof_linear = nested_f_test(linear, full);
  const auto lof_quadratic = nested_f_test(quadratic, full);
  ASSERT_TRUE(lof_linear && lof_quadratic);
  EXPECT_EQ(lof_linear->df1, 3.0);
  EXPECT_EQ(lof_quadratic->df1, 2.0);
  EXPECT_LT(lof_linear->p, 1e-6) << "a straight line misses the L² term";
  EXPECT_GT(lof_quadratic->p, 0.01);
  // The straight line's residual spread is its shape, not noise.
  EXPECT_GT(linear.relative_residual_sd, 3 * full.relative_residual_sd);
  EXPECT_FALSE(nested_f_test(full, quadratic)) << "not nested that way round";
}

TEST(DriftModel, AStepSlowDownLeavesAutocorrelatedResiduals) {
  const auto smooth = simulate(5, 0.01, [](double t) { return 1.0 + 0.3 * t / 7.8; });
  const auto step = simulate(5, 0.01, [](double t) { return t < 4.0 ? 1.0 : 1.3; });
  EXPECT_GT(saturated(smooth).fit.durbin_watson, 1.2);
  EXPECT_LT(saturated(step).fit.durbin_watson, 1.0);
}

TEST(DriftModel, StoppingOnTheCiWidthKeepsItsCoverage) {
  // Precision on demand: sets of 10 shuffled calls (two rounds of five lengths) are added until
  // the average cost per 1,000 tokens is known to ±2 % or 12 sets have run; 3 % noise and a
  // smooth slow-down. The CI at the stop covers the truth as often as a fixed-size run's would.
  const double truth = 1300.0 + 250.0 * 2.25;
  const int sims = 200;
  int covered = 0;
  int stopped_early = 0;
  for (int i = 0; i < sims; ++i) {
    Rng rng(5000 + static_cast<std::uint64_t>(i));
    boost::random::normal_distribution<double> e(0.0, 0.03);
    std::vector<double> levels;
    for (int set = 0; set < 12; ++set) {
      const auto block = sim::blocked_levels({0.25, 0.5, 1.0, 1.5, 2.0}, 2, rng);
      levels.insert(levels.end(), block.begin(), block.end());
    }
    std::vector<double> y_all;
    for (std::size_t k = 0; k < levels.size(); ++k) {
      const double t = 0.2 * static_cast<double>(k);
      y_all.push_back(prefill_ms(levels[k]) * std::exp(0.03 * t) * (1.0 + e(rng)));
    }
    for (int sets = 2; sets <= 12; ++sets) {
      const auto n = static_cast<Eigen::Index>(10 * sets);
      Eigen::MatrixXd x(n, 3);
      Eigen::VectorXd t(n);
      Eigen::VectorXd y(n);
      for (Eigen::Index k = 0; k < n; ++k) {
        const double l = levels[static_cast<std::size_t>(k)];
        x.row(k) << 1.0, l, l * l;
        t(k) = 0.2 * static_cast<double>(k);
        y(k) = y_all[static_cast<std::size_t>(k)];
      }
      const auto f = fit_drift_smooth(x, kShape, t, y, 3);
      Eigen::VectorXd a = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(f.fit.p));
      a.head(3) << 0, 1, 2.25;
      const auto c = f.combination(a);
      const double half = (c.ci.upper - c.ci.lower) / 2 / std::abs(c.estimate);
      if (half <= 0.02 || sets == 12) {
        covered += c.ci.lower <= truth && truth <= c.ci.upper ? 1 : 0;
        stopped_early += sets < 12 ? 1 : 0;
        break;
      }
    }
  }
  const double coverage = covered / static_cast<double>(sims);
  EXPECT_GT(coverage, 0.90) << coverage;
  EXPECT_LT(coverage, 0.99) << coverage;
  EXPECT_GT(stopped_early, sims / 2) << "the target is reachable within the budget";
}

TEST(DriftModel, RefusesTooFewCallsAndMismatchedColumns) {
  const auto r = simulate(3, 0.01, [](double) { return 1.0; });
  EXPECT_THROW(fit_drift(r.x.topRows(4), kShape, r.t.topRows(4), kTime, r.y.head(4)), Error);
  EXPECT_THROW(fit_drift(r.x, kTime, r.t, kTime, r.y), Error);
  Eigen::MatrixXd collinear = r.x;
  collinear.col(2) = 2 * collinear.col(1);
  EXPECT_THROW(fit_drift(collinear, kShape, r.t, kTime, r.y), Error);
}

}  // namespace
}  // namespace kvbench::stats
