#include "harness/load/capacity_boundary.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace kvbench::load {
namespace {

std::vector<double> around(double center, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(center * (0.9 + 0.2 * i / std::max(1, n - 1)));  // ±10 %, p90 just below 1.08x
  }
  return v;
}

TEST(CapacityBoundary, IsotonicFitPoolsViolators) {
  EXPECT_EQ(isotonic_fit({1, 3, 2, 4}, {1, 1, 1, 1}), (std::vector<double>{1, 2.5, 2.5, 4}));
  EXPECT_EQ(isotonic_fit({5, 1, 1}, {1, 1, 2}), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(isotonic_fit({1, 2, 3}, {1, 1, 1}), (std::vector<double>{1, 2, 3}));
}

TEST(CapacityBoundary, SmoothRiseCrossesBetweenLevelsWithACi) {
  // p90 ~ 100 ms per conversation: the 500 ms limit lies between 4 and 5.
  std::vector<LevelSamples> levels;
  for (int l = 1; l <= 6; ++l) {
    levels.push_back({l, around(100.0 * l, 12)});
  }
  const auto b = estimate_boundary(levels, 500, 7, 500);
  ASSERT_TRUE(b.boundary);
  EXPECT_EQ(b.position, "within");
  EXPECT_GT(*b.boundary, 4.0);
  EXPECT_LT(*b.boundary, 5.0);
  EXPECT_EQ(b.shape, "smooth rise");
  ASSERT_TRUE(b.ci);
  EXPECT_LE(b.ci->lower, *b.boundary);
  EXPECT_GE(b.ci->upper, *b.boundary);
  EXPECT_LT(b.ci->upper - b.ci->lower, 1.5);
}

TEST(CapacityBoundary, ACliffIsNamed) {
  const auto b = estimate_boundary(
      {{1, around(100, 8)}, {2, around(120, 8)}, {3, around(140, 8)}, {4, around(900, 8)}}, 500, 1,
      200);
  ASSERT_TRUE(b.boundary);
  EXPECT_GT(*b.boundary, 3.0);
  EXPECT_LT(*b.boundary, 4.0);
  EXPECT_EQ(b.shape, "cliff");
  ASSERT_TRUE(b.jump);
  EXPECT_GT(*b.jump, 5.0);
}

TEST(CapacityBoundary, ANoisyDipIsMadeMonotone) {
  // Level 3 measured faster than level 2: the fit pools them, the crossing stays unique.
  const auto b = estimate_boundary(
      {{1, around(100, 8)}, {2, around(400, 8)}, {3, around(300, 8)}, {4, around(800, 8)}}, 500, 1,
      200);
  EXPECT_DOUBLE_EQ(b.monotone_ms[1], b.monotone_ms[2]);
  ASSERT_TRUE(b.boundary);
  EXPECT_GT(*b.boundary, 3.0);
}

TEST(CapacityBoundary, OutsideTheMeasuredLevels) {
  EXPECT_EQ(estimate_boundary({{1, around(100, 4)}, {2, around(200, 4)}}, 500, 1, 50).position,
            "above the measured levels");
  const auto below = estimate_boundary({{1, around(900, 4)}}, 500, 1, 50);
  EXPECT_EQ(below.position, "below the measured levels");
  EXPECT_FALSE(below.boundary);
  EXPECT_EQ(estimate_boundary({{1, {}}}, 500, 1, 50).position, "no level measured a TTFT");
}

}  // namespace
}  // namespace kvbench::load
