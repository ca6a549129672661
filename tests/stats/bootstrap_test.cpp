#include "harness/stats/bootstrap.h"

#include <cmath>

#include <boost/random/normal_distribution.hpp>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/stats/ols.h"

namespace kvbench::stats {
namespace {

struct Data {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

Data noisy_calls(int n, std::uint64_t seed) {
  Rng rng(seed);
  boost::random::normal_distribution<double> noise(0.0, 0.4);
  Data d{Eigen::MatrixXd(n, 3), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    const double prompt_k = 0.5 * (1 + i % 5);
    const double t_min = 0.5 * i;
    d.x.row(i) << 1.0, prompt_k, t_min;
    d.y(i) = 41.0 - 1.1 * prompt_k - 0.05 * t_min + noise(rng);
  }
  return d;
}

const std::vector<std::string> kNames{"intercept", "prompt_k", "t_min"};

TEST(PairsBootstrap, DeterministicForASeed) {
  const Data d = noisy_calls(30, 5);
  const PairsBootstrap a = pairs_bootstrap(d.x, d.y, kNames, {.resamples = 500, .seed = 17});
  const PairsBootstrap b = pairs_bootstrap(d.x, d.y, kNames, {.resamples = 500, .seed = 17});
  const PairsBootstrap c = pairs_bootstrap(d.x, d.y, kNames, {.resamples = 500, .seed = 18});
  EXPECT_EQ(a.coefficient("prompt_k").ci.lower, b.coefficient("prompt_k").ci.lower);
  EXPECT_EQ(a.coefficient("prompt_k").ci.upper, b.coefficient("prompt_k").ci.upper);
  EXPECT_NE(a.coefficient("prompt_k").ci.lower, c.coefficient("prompt_k").ci.lower);
  EXPECT_EQ(a.resamples_used, 500U);
  EXPECT_EQ(a.resamples_skipped, 0U);
  EXPECT_EQ(a.seed, 17U);
}

TEST(PairsBootstrap, AgreesWithTheTBasedInterval) {
  const Data d = noisy_calls(60, 9);
  const OlsFit ols = fit_ols(d.x, d.y, kNames);
  const PairsBootstrap b = pairs_bootstrap(d.x, d.y, kNames);
  const BootstrapCoefficient& c = b.coefficient("prompt_k");
  const Coefficient& o = ols.coefficient("prompt_k");
  EXPECT_DOUBLE_EQ(c.estimate, o.estimate);
  EXPECT_LT(c.ci.lower, o.estimate);
  EXPECT_GT(c.ci.upper, o.estimate);
  // With Gaussian, homoscedastic noise the bootstrap SE estimates the OLS SE.
  EXPECT_NEAR(c.bootstrap_se / o.se, 1.0, 0.25);
  EXPECT_THROW(b.coefficient("nope"), Error);
}

TEST(PairsBootstrap, SkipsRankDeficientResamples) {
  Data d = noisy_calls(30, 2);
  Eigen::MatrixXd x(30, 4);
  x << d.x, Eigen::VectorXd::Zero(30);
  x(4, 3) = 1.0;  // a level seen in one row only: missing from about 36 % of resamples
  const PairsBootstrap b =
      pairs_bootstrap(x, d.y, {"intercept", "prompt_k", "t_min", "rare"}, {.resamples = 400});
  EXPECT_GT(b.resamples_skipped, 80U);
  EXPECT_LT(b.resamples_skipped, 220U);
  EXPECT_EQ(b.resamples_used + b.resamples_skipped, 400U);
}

TEST(PairsBootstrap, JsonAndErrors) {
  const Data d = noisy_calls(20, 4);
  const nlohmann::json j = pairs_bootstrap(d.x, d.y, kNames, {.resamples = 50});
  EXPECT_EQ(j.at("coefficients").size(), 3U);
  EXPECT_EQ(j.at("resamples_used"), 50);
  EXPECT_THROW(pairs_bootstrap(d.x, d.y, kNames, {.resamples = 0}), Error);
}

}  // namespace
}  // namespace kvbench::stats
