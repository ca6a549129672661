#include "harness/stats/distributions.h"

#include <cmath>

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::stats {
namespace {

// Printed t tables give four decimals; half a unit in the last place is the tolerance.
constexpr double kTableTolerance = 5e-5;

TEST(Distributions, StudentTQuantilesMatchTables) {
  EXPECT_NEAR(t_quantile(0.975, 27), 2.0518, kTableTolerance);
  EXPECT_NEAR(t_quantile(0.975, 26), 2.0555, kTableTolerance);
  // Two-sided 95 % with 24 df is the 0.975 quantile.
  EXPECT_NEAR(t_quantile(0.975, 24), 2.0639, kTableTolerance);
  EXPECT_NEAR(t_quantile(0.977, 24), 2.1044, kTableTolerance);
  EXPECT_NEAR(t_quantile(0.975, 2), 4.3027, kTableTolerance);
  EXPECT_NEAR(t_quantile(0.95, 30), 1.6973, kTableTolerance);
}

TEST(Distributions, StudentTCdfInvertsTheQuantile) {
  EXPECT_NEAR(t_cdf(t_quantile(0.9, 7.5), 7.5), 0.9, 1e-14);
  EXPECT_DOUBLE_EQ(t_cdf(0.0, 3), 0.5);
  EXPECT_NEAR(t_quantile(0.95, 30), 1.6972608865939578, 1e-14);  // mpmath, 40 digits
  EXPECT_NEAR(t_two_sided_p(2.0518305164802856, 27), 0.05, 1e-14);
  EXPECT_DOUBLE_EQ(t_two_sided_p(INFINITY, 5), 0.0);
  EXPECT_TRUE(std::isnan(t_two_sided_p(NAN, 5)));
}

TEST(Distributions, NormalQuantileMatchesTables) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 5e-7);
  EXPECT_NEAR(normal_quantile(0.95), 1.644854, 5e-7);
  EXPECT_DOUBLE_EQ(normal_quantile(0.5), 0.0);
}

TEST(Distributions, FisherUpperTailEqualsSquaredTForOneNumeratorDf) {
  // F(1, df) = T(df)², so P(F > t²) is the two-sided t p-value.
  EXPECT_NEAR(f_upper_tail(18.0, 1, 2), 0.0513167019494862, 1e-14);
  EXPECT_NEAR(f_upper_tail(4.0, 1, 10), t_two_sided_p(2.0, 10), 1e-14);
}

TEST(Distributions, RejectsBadArguments) {
  EXPECT_THROW(t_quantile(0.0, 5), Error);
  EXPECT_THROW(t_quantile(1.0, 5), Error);
  EXPECT_THROW(t_quantile(0.5, 0), Error);
  EXPECT_THROW(normal_quantile(1.5), Error);
  EXPECT_THROW(f_upper_tail(1.0, 0, 3), Error);
}

}  // namespace
}  // namespace kvbench::stats
