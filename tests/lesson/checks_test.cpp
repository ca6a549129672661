#include "harness/lesson/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvbench::lesson {
namespace {

using ::testing::HasSubstr;

stats::Interval ci(double lo, double hi) {
  return {lo, hi, 0.95};
}

TEST(TtftRises, PassesWhenTheSlopeCiIsAboveZeroAndTheLongestIsSlower) {
  const auto r = check_ttft_rises({1010.8, ci(856.6, 1165.0), 82.8, 3530.1});
  EXPECT_EQ(r.verdict, Verdict::pass);
  EXPECT_EQ(r.why,
            "slope 1011 ms per 1,000 tokens [95% CI 856.6, 1165]; median 82.8 ms -> 3530 ms: TTFT "
            "rose with prompt length");
}

TEST(TtftRises, FailsWhenTheLongestPromptIsNotSlower) {
  EXPECT_EQ(check_ttft_rises({5.0, ci(1.0, 9.0), 500.0, 400.0}).verdict, Verdict::fail);
  EXPECT_EQ(check_ttft_rises({-5.0, ci(-9.0, -1.0), 400.0, 500.0}).verdict, Verdict::fail);
}

TEST(TtftRises, InconclusiveWhenTheCiHoldsZeroOrThereIsNoFit) {
  const auto r = check_ttft_rises({5.0, ci(-1.0, 11.0), 400.0, 500.0});
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_THAT(r.why, HasSubstr("the CI holds 0"));
  EXPECT_EQ(check_ttft_rises({}).verdict, Verdict::inconclusive);
}

TEST(DecodeFalls, VerdictFollowsTheCiOfTheSlope) {
  const auto pass = check_decode_falls({-1.1, ci(-1.31, -0.89)});
  EXPECT_EQ(pass.verdict, Verdict::pass);
  EXPECT_EQ(pass.why,
            "slope -1.1 tok/s per 1,000 tokens [95% CI -1.31, -0.89]: decoding slowed with prompt "
            "length");
  EXPECT_EQ(check_decode_falls({0.5, ci(0.1, 0.9)}).verdict, Verdict::fail);
  EXPECT_EQ(check_decode_falls({-59.25, ci(-180.47, 61.97)}).verdict, Verdict::inconclusive);
  EXPECT_EQ(check_decode_falls({-1.0, std::nullopt}).verdict, Verdict::inconclusive);
  EXPECT_EQ(check_decode_falls({}).tolerance,
            "95% CI of the decode-rate slope per 1,000 prompt tokens, elapsed time in the fit, "
            "below 0");
}

TEST(Relative, PassesWithinTheToleranceAtItsEdge) {
  const auto r = check_relative({2176.0, std::nullopt, 2176.0, 0.10, "bytes per token"});
  EXPECT_EQ(r.verdict, Verdict::pass);
  EXPECT_EQ(r.why, "bytes per token 2176 against 2176 expected (ratio 1.000)");
  EXPECT_EQ(r.tolerance, "measured within 10% of expected");
  EXPECT_EQ(check_relative({110.0, std::nullopt, 100.0, 0.10, "x"}).verdict, Verdict::pass);
  // The lesson's own slope: 21.6 KB against 19,584 B, 10.3 % over: outside 10 %.
  EXPECT_EQ(check_relative({21600.0, std::nullopt, 19584.0, 0.10, "x"}).verdict, Verdict::fail);
}

TEST(Relative, InconclusiveWhenTheCiReachesTheBandOrNothingWasMeasured) {
  EXPECT_EQ(check_relative({130.0, ci(105.0, 155.0), 100.0, 0.10, "x"}).verdict,
            Verdict::inconclusive);
  EXPECT_EQ(check_relative({130.0, ci(115.0, 145.0), 100.0, 0.10, "x"}).verdict, Verdict::fail);
  EXPECT_EQ(check_relative({std::nullopt, std::nullopt, 100.0, 0.10, "x"}).verdict,
            Verdict::inconclusive);
  EXPECT_EQ(check_relative({1.0, std::nullopt, std::nullopt, 0.10, "x"}).verdict,
            Verdict::inconclusive);
}

TEST(Reuse, TwoSidedBandAroundOneMinusF) {
  const auto pass = check_reuse({0.78, ci(0.74, 0.81), 3, 0.75, false, 0.10, std::nullopt});
  EXPECT_EQ(pass.verdict, Verdict::pass);
  EXPECT_EQ(pass.tolerance, "median second/cold ratio within 0.10 of 1 - f = 0.75");
  EXPECT_EQ(pass.why, "median ratio 0.780 [95% CI 0.74, 0.81] over 3 pairs");
  EXPECT_EQ(check_reuse({0.95, ci(0.9, 1.0), 3, 0.75, false, 0.10, std::nullopt}).verdict,
            Verdict::fail);
  EXPECT_EQ(check_reuse({0.55, ci(0.5, 0.6), 3, 0.75, false, 0.10, std::nullopt}).verdict,
            Verdict::fail);
  EXPECT_EQ(check_reuse({0.9, ci(0.8, 1.0), 3, 0.75, false, 0.10, std::nullopt}).verdict,
            Verdict::inconclusive);
  EXPECT_EQ(check_reuse({0.9, std::nullopt, 1, 0.75, false, 0.10, std::nullopt}).verdict,
            Verdict::fail);
}

TEST(Reuse, CeilingForNearlyFreeResends) {
  const auto pass = check_reuse({0.006, std::nullopt, 1, 0.0, true, 0.10, std::nullopt});
  EXPECT_EQ(pass.verdict, Verdict::pass);
  EXPECT_EQ(pass.tolerance, "median second/cold ratio at most 0.10");
  EXPECT_EQ(check_reuse({0.5, ci(0.4, 0.6), 2, 0.0, true, 0.10, std::nullopt}).verdict,
            Verdict::fail);
  EXPECT_EQ(check_reuse({0.2, ci(0.05, 0.3), 2, 0.0, true, 0.10, std::nullopt}).verdict,
            Verdict::inconclusive);
  EXPECT_EQ(check_reuse({std::nullopt, std::nullopt, 0, 0.0, true, 0.10, std::nullopt}).why,
            "no complete cold/second pair");
}

TEST(Reuse, AttentionPredictionRunsFromOneMinusFToOneMinusFSquared) {
  EXPECT_DOUBLE_EQ(reuse_ratio_with_attention(0.5, 0.0), 0.5);
  // rho = 2: 0.5 * (1 + 2 * 1.5 / 2) / 2 = 0.625.
  EXPECT_DOUBLE_EQ(reuse_ratio_with_attention(0.5, 2.0), 0.625);
  EXPECT_NEAR(reuse_ratio_with_attention(0.25, 1e9), 1 - 0.0625, 1e-6);
  EXPECT_DOUBLE_EQ(reuse_ratio_with_attention(0.0, 3.0), 1.0);
}

TEST(Reuse, FitsRhoFromThePositionsAndClampsIt) {
  std::vector<std::pair<double, double>> exact;
  for (double f : {0.25, 0.5, 0.75}) {
    exact.emplace_back(f, reuse_ratio_with_attention(f, 2.5));
  }
  EXPECT_NEAR(*fit_attention_rho(exact), 2.5, 1e-3);
  EXPECT_DOUBLE_EQ(*fit_attention_rho({{0.25, 0.75}, {0.5, 0.5}}), 0.0);
  // A server that reuses nothing reads everything again: rho runs into its ceiling.
  EXPECT_DOUBLE_EQ(*fit_attention_rho({{0.25, 1.0}, {0.5, 1.0}, {0.75, 1.0}}), kRhoMax);
  EXPECT_FALSE(fit_attention_rho({{0.5, 0.6}}));
}

TEST(Reuse, FittedAttentionWidensTheBandUpwardsOnly) {
  // Measured 0.64 at f = 0.5 with rho 2.6 fitted over all positions: within R + 0.05.
  ReuseInput in{0.642, ci(0.61, 0.65), 3, 0.5, false, 0.10, 2.6};
  const auto pass = check_reuse(in);
  EXPECT_EQ(pass.verdict, Verdict::pass) << pass.tolerance;
  EXPECT_NE(pass.tolerance.find("rho 2.60"), std::string::npos) << pass.tolerance;
  in.rho.reset();
  EXPECT_EQ(check_reuse(in).verdict, Verdict::fail);
  // No reuse at all (ratio 1.0) fails even at the largest rho: R(0.5, 4) + 0.05 = 0.717.
  EXPECT_EQ(check_reuse({1.0, ci(0.98, 1.02), 3, 0.5, false, 0.10, kRhoMax}).verdict,
            Verdict::fail);
  // The lower end stays 1 - f - tolerance.
  EXPECT_EQ(check_reuse({0.35, ci(0.33, 0.37), 3, 0.5, false, 0.10, 2.6}).verdict, Verdict::fail);
}

TEST(Trap, SpeedupDecides) {
  const auto pass = check_trap({6, 2, 40.0, 2530.0});
  EXPECT_EQ(pass.verdict, Verdict::pass);
  EXPECT_EQ(pass.why, "2 cold reads 2530 ms, 6 cached 40 ms: 63.2x");
  EXPECT_EQ(check_trap({3, 1, 100.0, 300.0}).verdict, Verdict::inconclusive);
  EXPECT_EQ(check_trap({3, 1, 100.0, 150.0}).verdict, Verdict::fail);
  EXPECT_EQ(check_trap({3, 1, 100.0, 500.0}).verdict, Verdict::pass);
}

TEST(Trap, NoCacheHitsFailAndNoColdReadIsInconclusive) {
  const auto none = check_trap({0, 8, std::nullopt, std::nullopt});
  EXPECT_EQ(none.verdict, Verdict::fail);
  EXPECT_EQ(none.why, "none of 8 repeated calls was served from the prompt cache");
  EXPECT_EQ(check_trap({0, 0, std::nullopt, std::nullopt}).verdict, Verdict::inconclusive);
  EXPECT_EQ(check_trap({4, 0, 40.0, std::nullopt}).verdict, Verdict::inconclusive);
}

TEST(Verdict, Names) {
  EXPECT_EQ(to_string(Verdict::pass), "pass");
  EXPECT_EQ(to_string(Verdict::fail), "fail");
  EXPECT_EQ(to_string(Verdict::inconclusive), "inconclusive");
}

}  // namespace
}  // namespace kvbench::lesson
