// The variant effect across blocks: block levels are mean residuals plus the block variant's
// fitted effect, compared across blocks with the pooled between-block spread.

#include "harness/gate/block_effect.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kvbench::gate {
namespace {

// Two calls per block; blocks A B B A.
struct Fixture {
  std::vector<CallRecord> calls;
  stats::OlsFit fit;
  Fixture(const std::vector<double>& residuals) {
    const std::vector<std::string> order = {"a", "b", "b", "a"};
    for (int b = 0; b < 4; ++b) {
      for (int k = 0; k < 2; ++k) {
        CallRecord r;
        r.block = b;
        r.variant = order[static_cast<std::size_t>(b)];
        calls.push_back(r);
      }
    }
    fit.residuals = Eigen::Map<const Eigen::VectorXd>(residuals.data(),
                                                      static_cast<Eigen::Index>(residuals.size()));
  }
  std::vector<const CallRecord*> rows() const {
    std::vector<const CallRecord*> out;
    for (const auto& c : calls) {
      out.push_back(&c);
    }
    return out;
  }
};

TEST(BlockEffect, ComparesBlockLevelsWithThePooledSpread) {
  // Block mean residuals: a: +0.01, -0.01; b: +0.02, -0.02. Fitted effect of b: -0.10.
  const Fixture f({0.0, 0.02, 0.03, 0.01, -0.02, -0.02, -0.01, -0.01});
  const auto e = block_effect(f.rows(), f.fit, {{"b", -0.10}}, "a", "b");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->blocks, 4U);
  EXPECT_DOUBLE_EQ(e->df, 2.0);
  EXPECT_NEAR(e->estimate, -0.10, 1e-12);
  // Within-variant sum of squares 2 * 0.01^2 + 2 * 0.02^2 = 0.001 over 2 df; SE = s * sqrt(1).
  EXPECT_NEAR(e->se, std::sqrt(0.001 / 2.0), 1e-12);
}

// Two sets of A B B A, the second 20 % slower throughout (the machine's state of that minute):
// within each set the candidate's blocks sit 0.10 below the baseline's, give or take 0.01.
// Compared within sets, the effect keeps its spread of 0.01; pooled across sets, the sets'
// difference would swamp it.
TEST(BlockEffect, ComparesWithinCounterbalancedGroups) {
  std::vector<CallRecord> calls;
  const std::vector<std::string> order = {"a", "b", "b", "a"};
  const std::vector<double> noise = {0.01, -0.01, 0.01, -0.01, -0.01, 0.01, -0.01, 0.01};
  std::vector<double> residuals;
  for (int b = 0; b < 8; ++b) {
    CallRecord r;
    r.block = b;
    r.variant = order[static_cast<std::size_t>(b % 4)];
    calls.push_back(r);
    // Residuals of a call model that knows the variant (-0.10) but not the sets.
    residuals.push_back((b < 4 ? 0.1 : -0.1) + noise[static_cast<std::size_t>(b)]);
  }
  std::vector<const CallRecord*> rows;
  for (const auto& c : calls) {
    rows.push_back(&c);
  }
  stats::OlsFit fit;
  fit.residuals = Eigen::Map<const Eigen::VectorXd>(residuals.data(), 8);
  const auto within = block_effect(rows, fit, {{"b", -0.10}}, "a", "b", 4);
  const auto pooled = block_effect(rows, fit, {{"b", -0.10}}, "a", "b", 0);
  ASSERT_TRUE(within && pooled);
  EXPECT_EQ(within->units, 2U);
  EXPECT_EQ(pooled->units, 1U);
  EXPECT_DOUBLE_EQ(within->df, 5.0);  // 8 blocks - 2 groups - 1 variant
  EXPECT_DOUBLE_EQ(pooled->df, 6.0);
  EXPECT_NEAR(within->estimate, -0.10, 1e-12);  // the noise cancels within each set
  EXPECT_NEAR(pooled->estimate, within->estimate, 1e-12) << "balanced: the same contrast";
  EXPECT_LT(within->se, 0.01);
  EXPECT_GT(pooled->se, 5 * within->se);
}

TEST(BlockEffect, NothingWithoutDegreesOfFreedomOrMatchingRows) {
  const Fixture f({0, 0, 0, 0, 0, 0, 0, 0});
  auto rows = f.rows();
  rows.pop_back();
  EXPECT_FALSE(block_effect(rows, f.fit, {{"b", 0.0}}, "a", "b"));
  EXPECT_FALSE(block_effect(f.rows(), f.fit, {{"c", 0.0}}, "a", "c"));
  // One block per variant: no spread between blocks to estimate.
  Fixture two({0, 0, 0, 0, 0, 0, 0, 0});
  two.calls.resize(4);
  two.fit.residuals.conservativeResize(4);
  EXPECT_FALSE(block_effect(two.rows(), two.fit, {{"b", 0.0}}, "a", "b"));
}

}  // namespace
}  // namespace kvbench::gate
