#include <random>

#include <gtest/gtest.h>

#include "harness/stats/ols.h"

namespace kvbench::stats {
namespace {

TEST(DurbinWatson, NearTwoOnIndependentResiduals) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::VectorXd e(2000);
  for (Eigen::Index i = 0; i < e.size(); ++i) {
    e[i] = n01(rng);
  }
  EXPECT_NEAR(durbin_watson(e), 2.0, 0.15);
}

TEST(DurbinWatson, FarBelowTwoOnARandomWalk) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n01(0.0, 1.0);
  Eigen::VectorXd e(2000);
  double level = 0;
  for (Eigen::Index i = 0; i < e.size(); ++i) {
    level += n01(rng);
    e[i] = level;
  }
  EXPECT_LT(durbin_watson(e), 0.1);
}

}  // namespace
}  // namespace kvbench::stats
