#include "harness/stats/robust.h"

#include <cmath>
#include <random>
#include <vector>

#include <boost/random/normal_distribution.hpp>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/stats/ols.h"

namespace kvbench::stats {
namespace {

struct LineData {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

// y = 40 - 1.1·x + N(0, 0.3²), x spread over [0.5, 8].
LineData noisy_line(int n, std::uint64_t seed) {
  Rng rng(seed);
  boost::random::normal_distribution<double> noise(0.0, 0.3);
  LineData d{Eigen::MatrixXd(n, 2), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    const double x = 0.5 + 7.5 * i / (n - 1);
    d.x.row(i) << 1.0, x;
    d.y(i) = 40.0 - 1.1 * x + noise(rng);
  }
  return d;
}

TEST(Huber, AgreesWithOlsOnCleanData) {
  // Huber keeps 95 % efficiency at the normal, so on clean data the two estimates differ by a
  // small fraction of an SE; the flag (> 1 SE) must never fire.
  double sum_ratio = 0.0;
  constexpr int kRuns = 20;
  for (int seed = 1; seed <= kRuns; ++seed) {
    const LineData d = noisy_line(30, static_cast<std::uint64_t>(seed));
    const OlsFit ols = fit_ols(d.x, d.y, {"intercept", "x"});
    const HuberFit h = fit_huber(d.x, d.y, {"intercept", "x"});
    EXPECT_TRUE(h.converged);
    EXPECT_LE(h.iterations, 50U);
    EXPECT_FALSE(h.any_differs_from_ols);
    EXPECT_NEAR(h.scale, 0.3, 0.15);
    sum_ratio += std::abs(h.coefficients[1].estimate - ols.coefficients[1].estimate) /
                 ols.coefficients[1].se;
  }
  EXPECT_LT(sum_ratio / kRuns, 0.3);
}

TEST(Huber, ResistsOneTenfoldOutlier) {
  LineData d = noisy_line(30, 11);
  d.y(25) *= 10.0;  // one call reads ten times too high
  const OlsFit ols = fit_ols(d.x, d.y, {"intercept", "x"});
  const HuberFit h = fit_huber(d.x, d.y, {"intercept", "x"});
  EXPECT_TRUE(h.converged);
  EXPECT_GT(std::abs(ols.coefficients[1].estimate + 1.1), 1.0);  // OLS is pulled far off
  EXPECT_NEAR(h.coefficients[1].estimate, -1.1, 0.1);
  EXPECT_NEAR(h.coefficients[0].estimate, 40.0, 0.5);
  EXPECT_TRUE(h.coefficients[1].differs_from_ols);
  EXPECT_TRUE(h.any_differs_from_ols);
  EXPECT_LT(h.weights(25), 0.01);
  EXPECT_DOUBLE_EQ(h.weights(0), 1.0);
}

TEST(Huber, RejectsBadOptions) {
  const LineData d = noisy_line(10, 1);
  EXPECT_THROW(fit_huber(d.x, d.y, {"intercept", "x"}, {.k = 0.0}), Error);
}

TEST(TheilSen, ExactOnALine) {
  const std::vector<double> x{0, 1, 2, 3, 4, 5, 6};
  std::vector<double> y;
  for (double v : x) {
    y.push_back(3.0 - 2.0 * v);
  }
  const TheilSenFit f = theil_sen(x, y);
  EXPECT_DOUBLE_EQ(f.slope, -2.0);
  EXPECT_DOUBLE_EQ(f.intercept, 3.0);
  EXPECT_DOUBLE_EQ(f.slope_ci.lower, -2.0);
  EXPECT_DOUBLE_EQ(f.slope_ci.upper, -2.0);
  EXPECT_EQ(f.pairs, 21U);
}

TEST(TheilSen, ResistsOutliersWhereOlsDoesNot) {
  std::vector<double> x;
  std::vector<double> y;
  for (int i = 0; i < 20; ++i) {
    x.push_back(i);
    y.push_back(50.0 - 0.5 * i);
  }
  y[16] += 40.0;  // three wild probes out of twenty, late in the run
  y[18] += 45.0;
  y[19] += 50.0;
  const TheilSenFit f = theil_sen(x, y);
  // 136 of the 190 pairwise slopes are exactly -0.5, so the median is too.
  EXPECT_DOUBLE_EQ(f.slope, -0.5);
  EXPECT_DOUBLE_EQ(f.intercept, 50.0);
  EXPECT_LE(f.slope_ci.lower, -0.5);
  EXPECT_GE(f.slope_ci.upper, -0.5);
  Eigen::MatrixXd xm(20, 2);
  Eigen::VectorXd ym(20);
  for (int i = 0; i < 20; ++i) {
    xm.row(i) << 1.0, x[static_cast<std::size_t>(i)];
    ym(i) = y[static_cast<std::size_t>(i)];
  }
  // OLS moves by Σ(x - 9.5)·δ / Sxx = (6.5·40 + 8.5·45 + 9.5·50) / 665 = 1.68.
  EXPECT_NEAR(fit_ols(xm, ym, {"intercept", "t"}).coefficients[1].estimate, -0.5 + 1117.5 / 665.0,
              1e-12);
}

TEST(TheilSen, KendallIntervalOnHandWorkedSample) {
  // 28 slopes; C = 1.959964·sqrt(8·7·21/18) = 15.842; M1 = 6.079, M2 + 1 = 22.921.
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> y{2.0, 3.5, 3.1, 5.2, 4.8, 6.9, 7.7, 7.1};
  const TheilSenFit f = theil_sen(x, y);
  EXPECT_EQ(f.pairs, 28U);
  EXPECT_NEAR(f.slope, 0.8366666666666667, 1e-14);
  EXPECT_NEAR(f.intercept, 1.495, 1e-14);
  EXPECT_NEAR(f.slope_ci.lower, 0.4809174896100097, 1e-12);
  EXPECT_NEAR(f.slope_ci.upper, 1.1434250115444333, 1e-12);
  EXPECT_EQ(f.ci_method, TheilSenCi::kendall);
}

TEST(TheilSen, BootstrapIntervalIsDeterministicForASeed) {
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> y{2.0, 3.5, 3.1, 5.2, 4.8, 6.9, 7.7, 7.1};
  TheilSenOptions options;
  options.ci_method = TheilSenCi::bootstrap;
  options.seed = 99;
  const TheilSenFit a = theil_sen(x, y, options);
  const TheilSenFit b = theil_sen(x, y, options);
  EXPECT_EQ(a.slope_ci.lower, b.slope_ci.lower);
  EXPECT_EQ(a.slope_ci.upper, b.slope_ci.upper);
  EXPECT_EQ(a.resamples, 2000U);  // n = 8 never draws a single distinct x in practice
  EXPECT_LT(a.slope_ci.lower, a.slope);
  EXPECT_GT(a.slope_ci.upper, a.slope);
}

TEST(TheilSen, RelativeDriftOverTheRun) {
  const std::vector<double> t{0, 2, 4, 6, 8, 10};
  const std::vector<double> y{100, 98, 96, 94, 92, 90};
  const TheilSenFit f = theil_sen(t, y);
  EXPECT_DOUBLE_EQ(relative_drift(f, 0.0, 10.0), -0.1);
  EXPECT_DOUBLE_EQ(relative_drift(f, 5.0, 10.0), -5.0 / 95.0);
}

TEST(TheilSen, RejectsDegenerateInput) {
  const std::vector<double> same{1, 1, 1};
  const std::vector<double> y{1, 2, 3};
  EXPECT_THROW(theil_sen(same, y), Error);
  const std::vector<double> shorter{1, 2};
  EXPECT_THROW(theil_sen(shorter, y), Error);
}

TEST(Robust, JsonCarriesEveryNumber) {
  const LineData d = noisy_line(12, 3);
  const nlohmann::json h = fit_huber(d.x, d.y, {"intercept", "x"});
  EXPECT_EQ(h.at("coefficients").size(), 2U);
  EXPECT_EQ(h.at("weights").size(), 12U);
  const std::vector<double> x{0, 1, 2};
  const std::vector<double> y{1, 2, 3.5};
  const nlohmann::json t = theil_sen(x, y);
  EXPECT_EQ(t.at("ci_method"), "kendall");
  EXPECT_DOUBLE_EQ(t.at("slope").get<double>(), 1.25);  // slopes 1, 1.25, 1.5
}

}  // namespace
}  // namespace kvbench::stats
