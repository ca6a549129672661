#include "harness/stats/validity.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvbench::stats {
namespace {

std::vector<std::string> rules(const std::vector<ValidityReason>& reasons) {
  std::vector<std::string> out;
  for (const ValidityReason& r : reasons) {
    out.push_back(r.rule);
  }
  return out;
}

ValidityInputs healthy() {
  ValidityInputs in;
  in.durbin_watson = 1.9;
  in.cv_resid = 0.02;
  in.valid_calls = 30;
  in.failed_calls = 1;
  in.corr_x_t = 0.05;
  in.probe_drift = -0.03;
  in.throttled_fraction = 0.0;
  return in;
}

TEST(Validity, HealthyRunHasNoReasons) {
  EXPECT_TRUE(validity_reasons(healthy()).empty());
  EXPECT_TRUE(validity_reasons(ValidityInputs{}).empty());  // nothing given, nothing judged
}

TEST(Validity, EveryRuleFires) {
  ValidityInputs in;
  in.durbin_watson = 0.6;
  in.cv_resid = 0.08;
  in.valid_calls = 8;
  in.failed_calls = 2;
  in.corr_x_t = -0.45;
  in.probe_drift = -0.12;
  in.throttled_fraction = 0.2;
  const std::vector<std::string> expected{"durbin_watson", "cv_resid",   "corr_x_t",
                                          "probe_drift",   "throttling", "valid_calls",
                                          "failed_calls"};
  EXPECT_EQ(rules(validity_reasons(in)), expected);
}

TEST(Validity, MessagesCarryTheNumbers) {
  ValidityInputs in = healthy();
  in.cv_resid = 0.061;
  in.failed_calls = 4;  // 4 of 34 = 11.8 %
  const std::vector<ValidityReason> r = validity_reasons(in);
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].message, "CV of residuals 6.1 % > 5.0 %");
  EXPECT_EQ(r[1].message, "4 of 34 calls failed (11.8 % > 10.0 %)");
}

TEST(Validity, DurbinWatsonIsForgivenWhenTheTSquaredRefitRecovers) {
  ValidityInputs in = healthy();
  in.durbin_watson = 0.8;
  EXPECT_EQ(rules(validity_reasons(in)), std::vector<std::string>{"durbin_watson"});
  in.durbin_watson_t2 = 1.6;
  EXPECT_TRUE(validity_reasons(in).empty());
  in.durbin_watson_t2 = 0.9;
  const std::vector<ValidityReason> r = validity_reasons(in);
  ASSERT_EQ(r.size(), 1U);
  EXPECT_NE(r[0].message.find("0.90 after refitting with t²"), std::string::npos) << r[0].message;
}

TEST(Validity, BoundariesAreInclusiveOfTheLimit) {
  ValidityInputs in = healthy();
  in.durbin_watson = 1.0;
  in.cv_resid = 0.05;
  in.valid_calls = 10;
  in.failed_calls = 0;
  in.corr_x_t = 0.3;
  in.probe_drift = 0.1;
  EXPECT_TRUE(validity_reasons(in).empty());
  in.valid_calls = 9;
  EXPECT_EQ(rules(validity_reasons(in)), std::vector<std::string>{"valid_calls"});
}

TEST(Validity, ProbeDriftIsJudgedOnItsPointEstimateAndShowsItsCi) {
  ValidityInputs in = healthy();
  in.probe_drift = 1.46;  // a step in the last three of seven probes: its Kendall CI spans 0
  in.probe_drift_lower = -0.30;
  in.probe_drift_upper = 4.96;
  const std::vector<ValidityReason> r = validity_reasons(in);
  ASSERT_EQ(rules(r), std::vector<std::string>{"probe_drift"});
  EXPECT_EQ(r[0].message,
            "probe drifted +146.0 % [-30.0, +496.0] of its level over the run (limit 10.0 %)");
  in.probe_drift = 0.08;  // within the limit: never a reason
  EXPECT_TRUE(validity_reasons(in).empty());
}

TEST(Validity, NanInputsAreNotJudged) {
  ValidityInputs in = healthy();
  in.corr_x_t = std::nan("");
  in.cv_resid = std::nan("");
  EXPECT_TRUE(validity_reasons(in).empty());
}

TEST(Validity, CustomLimitsAndJson) {
  ValidityLimits limits;
  limits.max_cv_resid = 0.01;
  const std::vector<ValidityReason> r = validity_reasons(healthy(), limits);
  ASSERT_EQ(r.size(), 1U);
  const nlohmann::json j = r;
  EXPECT_EQ(j.at(0).at("rule"), "cv_resid");
  EXPECT_DOUBLE_EQ(nlohmann::json(limits).at("max_cv_resid").get<double>(), 0.01);
  ValidityInputs in;
  in.valid_calls = 12;
  const nlohmann::json inputs = in;
  EXPECT_EQ(inputs.at("valid_calls"), 12);
  EXPECT_TRUE(inputs.at("cv_resid").is_null());
}

}  // namespace
}  // namespace kvbench::stats
