#include "harness/stats/ols.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"

namespace kvbench::stats {
namespace {

// Expected p-values and t quantiles were computed with mpmath at 40 digits.
// x = 0, 1, 2, 3; y = 0, 1, 1, 2: slope 0.6, intercept 0.1, residuals -0.1, 0.3, -0.3, 0.1,
// RSS 0.2, s² = 0.1, Sxx = 5, leverage 1/4 + (x - 1.5)²/5.
OlsFit small_fit(const OlsOptions& options = {}) {
  Eigen::MatrixXd x(4, 2);
  x << 1, 0, 1, 1, 1, 2, 1, 3;
  Eigen::VectorXd y(4);
  y << 0, 1, 1, 2;
  return fit_ols(x, y, {"intercept", "x"}, options);
}

TEST(Ols, SmallFitMatchesClosedForm) {
  const OlsFit f = small_fit();
  EXPECT_NEAR(f.coefficients[0].estimate, 0.1, 1e-14);
  EXPECT_NEAR(f.coefficients[1].estimate, 0.6, 1e-14);
  EXPECT_NEAR(f.coefficients[0].se, std::sqrt(0.07), 1e-14);
  EXPECT_NEAR(f.coefficients[1].se, std::sqrt(0.02), 1e-14);
  EXPECT_NEAR(f.coefficients[1].t, 0.6 / std::sqrt(0.02), 1e-12);
  EXPECT_NEAR(f.coefficients[1].p, 0.0513167019494862, 1e-12);
  EXPECT_NEAR(f.coefficients[0].p, 0.7418011102528389, 1e-12);
  const double half = 4.302652729749464 * std::sqrt(0.02);
  EXPECT_NEAR(f.coefficients[1].ci.lower, 0.6 - half, 1e-12);
  EXPECT_NEAR(f.coefficients[1].ci.upper, 0.6 + half, 1e-12);
  EXPECT_EQ(f.df, 2.0);
  EXPECT_TRUE(f.has_intercept);
  EXPECT_NEAR(f.rss, 0.2, 1e-14);
  EXPECT_NEAR(f.tss, 2.0, 1e-14);
  EXPECT_NEAR(f.r_squared, 0.9, 1e-14);
  EXPECT_NEAR(f.adj_r_squared, 0.85, 1e-14);
  EXPECT_NEAR(f.residual_se, std::sqrt(0.1), 1e-14);
  EXPECT_NEAR(f.cv_resid, std::sqrt(0.1) / 1.0, 1e-14);
  EXPECT_NEAR(f.f_statistic, 18.0, 1e-12);
  EXPECT_NEAR(f.f_p, 0.051316701949486204, 1e-12);
}

TEST(Ols, SmallFitDiagnosticsMatchClosedForm) {
  const OlsFit f = small_fit();
  EXPECT_NEAR(f.durbin_watson, (0.16 + 0.36 + 0.16) / 0.2, 1e-12);
  const double lev[4] = {0.7, 0.3, 0.3, 0.7};
  const double e[4] = {-0.1, 0.3, -0.3, 0.1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(f.leverage(i), lev[i], 1e-14);
    EXPECT_NEAR(f.residuals(i), e[i], 1e-14);
    const double r = e[i] / (std::sqrt(0.1) * std::sqrt(1.0 - lev[i]));
    EXPECT_NEAR(f.studentized(i), r, 1e-12);
    EXPECT_NEAR(f.cooks_distance(i), r * r * lev[i] / (2.0 * (1.0 - lev[i])), 1e-12);
  }
  EXPECT_TRUE(f.studentized_flags.empty());
  EXPECT_TRUE(f.cooks_flags.empty());  // 4/n = 1, the largest D is 0.389
  EXPECT_NEAR(f.max_abs_studentized, 0.3 / (std::sqrt(0.1) * std::sqrt(0.7)), 1e-12);
  EXPECT_NEAR(f.coefficients[1].vif, 1.0, 1e-14);
  EXPECT_TRUE(std::isnan(f.coefficients[0].vif));
}

TEST(Ols, Hc3MatchesSandwichFormula) {
  const OlsFit f = small_fit({.level = 0.95, .hc3 = true, .vif = true});
  EXPECT_NEAR(f.coefficients[0].se_hc3, 0.30018890499951356, 1e-13);
  EXPECT_NEAR(f.coefficients[1].se_hc3, 0.15386185163241406, 1e-13);
  EXPECT_EQ(f.covariance_hc3.rows(), 2);
  EXPECT_TRUE(std::isnan(small_fit().coefficients[1].se_hc3));
}

TEST(Ols, PredictionAtAPoint) {
  const OlsFit f = small_fit();
  Eigen::VectorXd x0(2);
  x0 << 1.0, 1.5;
  const Prediction p = predict(f, x0);
  EXPECT_NEAR(p.estimate, 1.0, 1e-14);
  EXPECT_NEAR(p.se_mean, std::sqrt(0.1 * 0.25), 1e-14);
  EXPECT_NEAR(p.se_prediction, std::sqrt(0.1 * 1.25), 1e-14);
  EXPECT_NEAR(p.mean_ci.upper, 1.0 + 4.302652729749464 * std::sqrt(0.025), 1e-12);
  EXPECT_NEAR(p.prediction_interval.lower, 1.0 - 4.302652729749464 * std::sqrt(0.125), 1e-12);
  Eigen::VectorXd wrong(3);
  wrong << 1, 2, 3;
  EXPECT_THROW(predict(f, wrong), Error);
}

TEST(Ols, ExactRecoveryOnNoiselessData) {
  Eigen::MatrixXd x(12, 3);
  Eigen::VectorXd y(12);
  for (int i = 0; i < 12; ++i) {
    const double a = 0.5 * i;
    const double b = (i * 7) % 5 - 2.0;
    x.row(i) << 1.0, a, b;
    y(i) = 41.0 - 1.1 * a + 0.25 * b;
  }
  const OlsFit f = fit_ols(x, y, {"intercept", "a", "b"});
  EXPECT_NEAR(f.coefficients[0].estimate, 41.0, 1e-12);
  EXPECT_NEAR(f.coefficients[1].estimate, -1.1, 1e-13);
  EXPECT_NEAR(f.coefficients[2].estimate, 0.25, 1e-13);
  EXPECT_NEAR(f.r_squared, 1.0, 1e-15);
  EXPECT_LT(f.residual_se, 1e-12);
}

TEST(Ols, OrthogonalDesignHasUnitVif) {
  Eigen::MatrixXd x(4, 3);
  x << 1, -1, -1, 1, 1, -1, 1, -1, 1, 1, 1, 1;
  Eigen::VectorXd y(4);
  y << 1, 2, 4, 3;
  const OlsFit f = fit_ols(x, y, {"intercept", "a", "b"});
  EXPECT_NEAR(f.coefficients[1].vif, 1.0, 1e-14);
  EXPECT_NEAR(f.coefficients[2].vif, 1.0, 1e-14);
}

TEST(Ols, RankDeficientDesignNamesTheCollinearPredictor) {
  Eigen::MatrixXd x(6, 3);
  x << 1, 1, 1, 1, 2, 2, 1, 3, 3, 1, 4, 4, 1, 5, 5, 1, 6, 6;
  Eigen::VectorXd y(6);
  y << 1, 2, 3, 3, 5, 6;
  try {
    fit_ols(x, y, {"intercept", "prompt_k", "prompt_copy"});
    FAIL() << "expected kvbench::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank-deficient"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'prompt_copy' is collinear with 'prompt_k'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Ols, DummyTrapNamesAllPartners) {
  // Intercept plus a dummy for every level: the dummies sum to the intercept.
  Eigen::MatrixXd x(6, 3);
  x << 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1;
  Eigen::VectorXd y(6);
  y << 1, 2, 1.1, 2.1, 0.9, 1.9;
  try {
    fit_ols(x, y, {"intercept", "cache=f16", "cache=q8_0"});
    FAIL() << "expected kvbench::Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is collinear with"), std::string::npos) << what;
    EXPECT_NE(what.find("(rank 2 of 3)"), std::string::npos) << what;
  }
}

TEST(Ols, RejectsBadShapes) {
  Eigen::MatrixXd x(3, 2);
  x << 1, 0, 1, 1, 1, 2;
  Eigen::VectorXd y(3);
  y << 1, 2, 3;
  EXPECT_THROW(fit_ols(x, y, {"intercept"}), Error);
  Eigen::VectorXd short_y(2);
  short_y << 1, 2;
  EXPECT_THROW(fit_ols(x, short_y, {"intercept", "x"}), Error);
  EXPECT_THROW(fit_ols(x.topRows(2), short_y, {"intercept", "x"}), Error);  // n <= p
  Eigen::MatrixXd zero(3, 2);
  zero << 1, 0, 1, 0, 1, 0;
  try {
    fit_ols(zero, y, {"intercept", "unused"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'unused' is zero in every row"), std::string::npos);
  }
}

TEST(Ols, RelativeEffectOfLogDummy) {
  // log y: group 0 = ±0.1, ±0.2 around 0; group 1 the same around log(0.9).
  Eigen::MatrixXd x(8, 2);
  Eigen::VectorXd y(8);
  const double dev[4] = {0.1, -0.1, 0.2, -0.2};
  for (int i = 0; i < 8; ++i) {
    const double d = i < 4 ? 0.0 : 1.0;
    x.row(i) << 1.0, d;
    y(i) = d * std::log(0.9) + dev[i % 4];
  }
  const OlsFit f = fit_ols(x, y, {"intercept", "build=candidate"});
  const RelativeEffect r = relative_effect(f, "build=candidate");
  EXPECT_NEAR(r.gamma, std::log(0.9), 1e-14);
  EXPECT_NEAR(r.relative, -0.1, 1e-14);
  const double t = t_quantile(0.975, 6);
  EXPECT_NEAR(r.ci.lower, std::exp(std::log(0.9) - t * r.se) - 1.0, 1e-14);
  EXPECT_NEAR(r.ci.upper, std::exp(std::log(0.9) + t * r.se) - 1.0, 1e-14);
  EXPECT_NEAR(r.se, std::sqrt((0.2 / 6.0) * 0.5), 1e-14);  // s² = RSS/df, n = 4 per group
  EXPECT_THROW(relative_effect(f, "nope"), Error);
}

TEST(Ols, DurbinWatsonEdgeCases) {
  Eigen::VectorXd one(1);
  one << 1.0;
  EXPECT_TRUE(std::isnan(durbin_watson(one)));
  Eigen::VectorXd alternating(4);
  alternating << 1, -1, 1, -1;
  EXPECT_DOUBLE_EQ(durbin_watson(alternating), 3.0);
}

TEST(Ols, JsonCarriesEveryNumber) {
  const nlohmann::json j = small_fit({.level = 0.9, .hc3 = true, .vif = true});
  EXPECT_EQ(j.at("coefficients").size(), 2U);
  EXPECT_EQ(j.at("coefficients").at(1).at("name"), "x");
  EXPECT_DOUBLE_EQ(j.at("level").get<double>(), 0.9);
  EXPECT_EQ(j.at("residuals").size(), 4U);
  EXPECT_EQ(j.at("covariance").size(), 2U);
  EXPECT_TRUE(j.contains("covariance_hc3"));
  EXPECT_NE(j.dump().find("\"vif\":null"), std::string::npos);  // NaN is written as null
  EXPECT_NEAR(j.at("durbin_watson").get<double>(), 3.4, 1e-12);
}

}  // namespace
}  // namespace kvbench::stats
