// The Ibragimov-Mueller cross-check: its arithmetic, its refusal below six units, and its
// coverage where rounds differ in their slope and their noise (no variance model could know
// both). Seeded.

#include "harness/stats/group_t.h"

#include <cmath>
#include <iostream>
#include <vector>

#include <boost/random/normal_distribution.hpp>
#include <gtest/gtest.h>

#include "harness/core/random.h"
#include "harness/stats/distributions.h"
#include "tests/support/replicates.h"

namespace kvbench::stats {
namespace {

TEST(GroupT, IsTheTIntervalOfTheGroupsEstimates) {
  const auto g = group_t({1.0, 2.0, 3.0});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->groups, 3U);
  EXPECT_DOUBLE_EQ(g->estimate, 2.0);
  EXPECT_DOUBLE_EQ(g->se, 1.0 / std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(g->df, 2.0);
  EXPECT_NEAR(g->ci.upper - g->estimate, t_quantile(0.975, 2) / std::sqrt(3.0), 1e-12);
  EXPECT_FALSE(group_t({1.0}));
}

// `rounds` rounds of three lengths; each round has its own slope (SD 0.05 about 1.0) and its own
// noise SD (1 % to 9 %).
struct Rounds {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
  std::vector<int> unit;
};

Rounds simulate_rounds(int rounds, Rng& rng) {
  boost::random::normal_distribution<double> z(0.0, 1.0);
  Rounds r;
  r.x.resize(rounds * 3, 1);
  r.y.resize(rounds * 3);
  Eigen::Index i = 0;
  for (int u = 0; u < rounds; ++u) {
    const double slope = 1.0 + 0.05 * z(rng);
    const double sd = 0.01 + 0.08 * (u % 5) / 4.0;
    const double level = 0.1 * z(rng);
    for (const double k : {0.25, 1.0, 2.0}) {
      r.x(i, 0) = k;
      r.y(i++) = level + slope * k + sd * z(rng);
      r.unit.push_back(u);
    }
  }
  return r;
}

constexpr int kGroupRuns = test::replicates(1000, 100);

TEST(GroupT, CoversWhereRoundsDifferInSlopeAndNoise) {
  Rng rng(29);
  const int runs = kGroupRuns;
  int covered = 0;
  for (int i = 0; i < runs; ++i) {
    const Rounds r = simulate_rounds(12, rng);
    const auto g = group_t_by_units(r.x, r.y, r.unit, {});
    ASSERT_TRUE(g);
    ASSERT_EQ(g->groups, 8U);
    covered += g->ci.lower <= 1.0 && 1.0 <= g->ci.upper ? 1 : 0;
  }
  const double coverage = static_cast<double>(covered) / runs;
  std::cout << "[ monte carlo ] Ibragimov-Mueller, 8 groups of 12 rounds: coverage " << coverage
            << " (" << runs << " runs)\n";
  if (test::kJudgeRates) {
    EXPECT_GT(coverage, 0.93);
    EXPECT_LT(coverage, 0.985);
  }
}

TEST(GroupT, NoCrossCheckBelowSixUnits) {
  Rng rng(3);
  const Rounds five = simulate_rounds(5, rng);
  EXPECT_FALSE(group_t_by_units(five.x, five.y, five.unit, {}));
  const Rounds six = simulate_rounds(6, rng);
  const auto g = group_t_by_units(six.x, six.y, six.unit, {});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->groups, 6U);
  // Leaving out one round's calls leaves five units.
  EXPECT_FALSE(group_t_by_units(six.x, six.y, six.unit, {0, 1, 2}));
  // Twelve rounds in server starts of two rounds each: six starts make six groups, never a start
  // split between two; in starts of three, four starts are too few.
  const Rounds twelve = simulate_rounds(12, rng);
  std::vector<int> pairs;
  std::vector<int> threes;
  for (const int u : twelve.unit) {
    pairs.push_back(u / 2);
    threes.push_back(u / 3);
  }
  const auto by_pairs = group_t_by_units(twelve.x, twelve.y, twelve.unit, {}, 8, 6, pairs);
  ASSERT_TRUE(by_pairs);
  EXPECT_EQ(by_pairs->groups, 6U);
  EXPECT_FALSE(group_t_by_units(twelve.x, twelve.y, twelve.unit, {}, 8, 6, threes));
}

}  // namespace
}  // namespace kvbench::stats
