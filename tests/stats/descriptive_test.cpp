#include "harness/stats/descriptive.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::stats {
namespace {

TEST(Descriptive, SummarizesSmallLiteralSample) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(v);
  EXPECT_EQ(s.n, 8U);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.sd, std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(32.0 / 7.0) / 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.mad_raw, 0.5);
  EXPECT_DOUBLE_EQ(s.mad, 0.5 * 1.4826);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  // Type 7: h = 7p. p05: h = 0.35 -> 2 + 0.35·2; p95: h = 6.65 -> 7 + 0.65·2.
  EXPECT_DOUBLE_EQ(s.p05, 2.7);
  EXPECT_DOUBLE_EQ(s.q1, 4.0);
  EXPECT_DOUBLE_EQ(s.q3, 5.5);
  EXPECT_DOUBLE_EQ(s.p95, 8.3);
  EXPECT_DOUBLE_EQ(s.iqr, 1.5);
}

TEST(Descriptive, FlagsTukeyMildOutlierButNotModifiedZ) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.upper_inner_fence, 7.75);
  EXPECT_DOUBLE_EQ(s.upper_outer_fence, 10.0);
  ASSERT_EQ(s.outliers.size(), 1U);
  EXPECT_EQ(s.outliers[0].index, 7U);
  EXPECT_EQ(s.outliers[0].tukey, TukeyClass::mild);
  EXPECT_DOUBLE_EQ(s.outliers[0].modified_z, 4.5 / (0.5 * 1.4826));
  EXPECT_FALSE(s.outliers[0].modified_z_flag);
}

TEST(Descriptive, FlagsSevereOutlierByBothRulesAndKeepsIt) {
  const std::vector<double> v{10, 10.1, 9.9, 10.2, 9.8, 10, 100};
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 10.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);  // flagged, never dropped
  ASSERT_EQ(s.outliers.size(), 1U);
  EXPECT_EQ(s.outliers[0].index, 6U);
  EXPECT_EQ(s.outliers[0].tukey, TukeyClass::severe);
  EXPECT_NEAR(s.outliers[0].modified_z, 90.0 / (0.1 * 1.4826), 1e-9);
  EXPECT_TRUE(s.outliers[0].modified_z_flag);
}

TEST(Descriptive, ModifiedZIsUndefinedWhenMadIsZero) {
  const std::vector<double> v{1, 1, 1, 1, 2};
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.mad_raw, 0.0);
  ASSERT_EQ(s.outliers.size(), 1U);  // Tukey still flags 2 (IQR = 0)
  EXPECT_TRUE(std::isnan(s.outliers[0].modified_z));
  EXPECT_FALSE(s.outliers[0].modified_z_flag);
}

TEST(Descriptive, SlowFirstValueForTimes) {
  const std::vector<double> v{20, 10, 10.5, 9.5, 10};
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.first_to_rest_ratio, 2.0);
  EXPECT_TRUE(s.slow_first);
  const std::vector<double> fine{11, 10, 10.5, 9.5, 10};
  EXPECT_FALSE(summarize(fine).slow_first);
}

TEST(Descriptive, SlowFirstValueForRates) {
  SummaryOptions options;
  options.better = Better::higher;
  const std::vector<double> v{5, 10, 10.5, 9.5, 10};
  const Summary s = summarize(v, options);
  EXPECT_DOUBLE_EQ(s.first_to_rest_ratio, 0.5);
  EXPECT_TRUE(s.slow_first);
  const std::vector<double> fast{20, 10, 10.5, 9.5, 10};
  EXPECT_FALSE(summarize(fast, options).slow_first);
}

TEST(Descriptive, SingleValue) {
  const std::vector<double> v{3.5};
  const Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p95, 3.5);
  EXPECT_TRUE(std::isnan(s.sd));
  EXPECT_DOUBLE_EQ(s.median_ci.lower, 3.5);
  EXPECT_DOUBLE_EQ(s.median_ci.upper, 3.5);
  EXPECT_FALSE(s.slow_first);
  EXPECT_TRUE(std::isnan(s.first_to_rest_ratio));
}

TEST(Descriptive, RejectsEmptyAndNonFinite) {
  const std::vector<double> empty;
  EXPECT_THROW(summarize(empty), Error);
  EXPECT_THROW(median(empty), Error);
  const std::vector<double> bad{1.0, NAN};
  EXPECT_THROW(summarize(bad), Error);
  const std::vector<double> one{1.0};
  EXPECT_THROW(percentile(one, 1.5), Error);
}

TEST(Descriptive, PercentileType7) {
  const std::vector<double> v{15, 20, 35, 40, 50};
  EXPECT_DOUBLE_EQ(percentile(v, 0.0), 15.0);
  EXPECT_DOUBLE_EQ(percentile(v, 1.0), 50.0);
  EXPECT_DOUBLE_EQ(percentile(v, 0.4), 29.0);  // h = 1.6: 20 + 0.6·15
  EXPECT_DOUBLE_EQ(median(v), 35.0);
}

TEST(Descriptive, PearsonCorrelation) {
  const std::vector<double> x{1, 2, 3, 4};
  const std::vector<double> y{1, 3, 2, 4};
  EXPECT_DOUBLE_EQ(pearson_correlation(x, y), 0.8);
  const std::vector<double> flat{2, 2, 2, 2};
  EXPECT_TRUE(std::isnan(pearson_correlation(x, flat)));
  const std::vector<double> shorter{1, 2};
  EXPECT_THROW(pearson_correlation(x, shorter), Error);
}

TEST(Descriptive, BootstrapMedianCiIsDeterministicForASeed) {
  const std::vector<double> v{41.2, 40.8, 39.9, 41.5, 40.1, 40.7, 42.0, 39.5, 40.9, 41.1};
  const Interval a = bootstrap_median_ci(v, 2000, 0.95, 42);
  const Interval b = bootstrap_median_ci(v, 2000, 0.95, 42);
  const Interval c = bootstrap_median_ci(v, 2000, 0.95, 43);
  EXPECT_EQ(a.lower, b.lower);
  EXPECT_EQ(a.upper, b.upper);
  EXPECT_TRUE(a.lower != c.lower || a.upper != c.upper);
  EXPECT_LE(a.lower, median(v));
  EXPECT_GE(a.upper, median(v));
  EXPECT_GE(a.lower, 39.5);
  EXPECT_LE(a.upper, 42.0);
  EXPECT_DOUBLE_EQ(a.level, 0.95);
}

TEST(Descriptive, BootstrapOfConstantSampleIsThePoint) {
  const std::vector<double> v(30, 7.25);
  const Interval ci = bootstrap_median_ci(v, 100, 0.9, 1);
  EXPECT_DOUBLE_EQ(ci.lower, 7.25);
  EXPECT_DOUBLE_EQ(ci.upper, 7.25);
}

TEST(Descriptive, JsonCarriesEveryNumber) {
  const std::vector<double> v{10, 10.1, 9.9, 10.2, 9.8, 10, 100};
  const nlohmann::json j = summarize(v);
  EXPECT_EQ(j.at("n"), 7);
  EXPECT_DOUBLE_EQ(j.at("median").get<double>(), 10.0);
  EXPECT_EQ(j.at("outliers").at(0).at("tukey"), "severe");
  EXPECT_TRUE(j.at("median_ci").contains("lower"));
  EXPECT_EQ(j.at("bootstrap_resamples"), 2000);
  const std::vector<double> one{1.0};
  const std::string text = nlohmann::json(summarize(one)).dump();
  EXPECT_NE(text.find("\"sd\":null"), std::string::npos);  // NaN is written as null
}

}  // namespace
}  // namespace kvbench::stats
