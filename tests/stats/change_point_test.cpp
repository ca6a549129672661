#include "harness/stats/change_point.h"

#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <gtest/gtest.h>

#include "harness/core/random.h"

namespace kvbench::stats {
namespace {

TEST(FindStep, FindsAStepWhereItWasPlanted) {
  // Six rounds' log levels: the machine ran twice as slow from the fourth round on.
  const std::vector<double> y{0.01, -0.02, 0.0, 0.70, 0.68, 0.71};
  const auto s = find_step(y, StepRule{});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->at, 3U);
  EXPECT_NEAR(s->shift, 0.693, 0.01);
  EXPECT_LT(s->p, 0.01);
}

TEST(FindStep, NeedsASegmentOnEachSideAndOneValueToPlaceTheSplit) {
  EXPECT_FALSE(find_step({0.0, 0.0, 1.0, 1.0}, StepRule{}).has_value());
  EXPECT_FALSE(find_step({}, StepRule{}).has_value());
}

TEST(FindStep, ARampIsDriftNotAStep) {
  // 60 % slower by the end, a little at a time: every split separates the means, a line fits
  // better.
  std::vector<double> y;
  for (int i = 0; i < 12; ++i) {
    y.push_back(0.04 * i + (i % 2 == 0 ? 0.005 : -0.005));
  }
  EXPECT_FALSE(find_step(y, StepRule{}).has_value());
}

TEST(FindStep, AShiftBelowTheFloorIsNoStep) {
  const std::vector<double> y{0.0, 0.001, 0.0, 0.1, 0.101, 0.1, 0.1};
  ASSERT_TRUE(find_step(y, StepRule{}).has_value());
  StepRule floor;
  floor.min_shift = 0.2;
  EXPECT_FALSE(find_step(y, floor).has_value());
}

// Level noise alone, 12 values: the Bonferroni bound keeps false steps at or below alpha
// (conservative: the splits' t statistics are correlated). 4,000 series, Monte Carlo SE of a
// rate of 0.01 is 0.0016.
TEST(FindStep, NoiseAloneGivesAStepAtMostAtAlpha) {
  Rng rng(7);
  boost::random::normal_distribution<double> noise(0.0, 0.1);
  int found = 0;
  const int runs = 4000;
  for (int r = 0; r < runs; ++r) {
    std::vector<double> y(12);
    for (auto& v : y) {
      v = noise(rng);
    }
    found += find_step(y, StepRule{}).has_value() ? 1 : 0;
  }
  EXPECT_LE(static_cast<double>(found) / runs, 0.01 + 3 * 0.0016) << found;
}

// Power: a 49 % step (log 0.4, four SDs of the level noise) at a random split of 12 values
// (0.87 of them found here, 0.83 at the right place; 0.43 at a step of 2.6 SDs).
TEST(FindStep, FindsMostStepsOfFourLevelSds) {
  Rng rng(11);
  boost::random::normal_distribution<double> noise(0.0, 0.1);
  boost::random::uniform_int_distribution<int> where(3, 9);
  int found = 0;
  int placed = 0;
  const int runs = 1000;
  for (int r = 0; r < runs; ++r) {
    const auto at = static_cast<std::size_t>(where(rng));
    std::vector<double> y(12);
    for (std::size_t i = 0; i < y.size(); ++i) {
      y[i] = noise(rng) + (i >= at ? 0.4 : 0.0);
    }
    const auto s = find_step(y, StepRule{});
    found += s ? 1 : 0;
    placed += s && s->at == at ? 1 : 0;
  }
  EXPECT_GT(found, 0.8 * runs);
  EXPECT_GT(placed, 0.75 * runs);
}

}  // namespace
}  // namespace kvbench::stats
