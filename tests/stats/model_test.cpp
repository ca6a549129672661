#include "harness/stats/model.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::stats {
namespace {

// Noiseless log model: value = 40·exp(-0.05·prompt_k - 0.01·t)·(0.9 if cache=q8_0)·(1.2 if
// ctx=8k), so the log fit recovers every term exactly.
std::vector<ModelRow> noiseless_rows() {
  std::vector<ModelRow> rows;
  const std::vector<std::string> caches{"q8_0", "f16", "q4_0"};
  for (int i = 0; i < 24; ++i) {
    ModelRow r;
    const double prompt_k = 0.5 * (1 + (i * 3) % 4);
    const std::string cache = caches[static_cast<std::size_t>(i % 3)];
    const std::string ctx = (i / 3) % 2 == 0 ? "4k" : "8k";
    r.numeric = {prompt_k};
    r.categorical = {cache, ctx};
    r.elapsed_min = 0.5 * i;
    double log_value = std::log(40.0) - 0.05 * prompt_k - 0.01 * r.elapsed_min;
    log_value += cache == "q8_0" ? std::log(0.9) : (cache == "q4_0" ? std::log(0.8) : 0.0);
    log_value += ctx == "8k" ? std::log(1.2) : 0.0;
    r.value = std::exp(log_value);
    rows.push_back(r);
  }
  return rows;
}

ModelSpec spec() {
  ModelSpec s;
  s.numeric = {"prompt_k"};
  s.categorical = {{"cache", ""}, {"ctx", ""}};
  return s;
}

TEST(Model, BuildsColumnsWithSortedReferenceLevels) {
  const std::vector<ModelRow> rows = noiseless_rows();
  const Design d = build_design(spec(), rows, false);
  const std::vector<std::string> names{"intercept",  "prompt_k",   "t_min",
                                       "cache=q4_0", "cache=q8_0", "ctx=8k"};
  EXPECT_EQ(d.names, names);
  ASSERT_EQ(d.dummies.size(), 2U);
  EXPECT_EQ(d.dummies[0].reference, "f16");
  EXPECT_EQ(d.dummies[1].reference, "4k");
  EXPECT_EQ(d.x.rows(), 24);
  // Row 0: prompt 0.5, t 0, cache q8_0, ctx 4k.
  Eigen::RowVectorXd expected(6);
  expected << 1.0, 0.5, 0.0, 0.0, 1.0, 0.0;
  EXPECT_EQ(d.x.row(0), expected);
  EXPECT_DOUBLE_EQ(d.y(0), rows[0].value);
}

TEST(Model, GivenReferenceLevelAndTimeSquared) {
  ModelSpec s = spec();
  s.categorical[0].reference = "q8_0";
  s.time_squared = true;
  const Design d = build_design(s, noiseless_rows(), true);
  EXPECT_EQ(d.names[3], "t_min^2");
  EXPECT_EQ(d.names[4], "cache=f16");
  EXPECT_EQ(d.names[5], "cache=q4_0");
  EXPECT_DOUBLE_EQ(d.x(4, 3), 4.0);  // t = 2 min
  EXPECT_DOUBLE_EQ(d.y(0), std::log(noiseless_rows()[0].value));
}

TEST(Model, FitRecoversEveryTermAndRelativeEffect) {
  const ModelFit f = fit_model(spec(), noiseless_rows());
  EXPECT_NEAR(f.log.coefficient("intercept").estimate, std::log(40.0), 1e-12);
  EXPECT_NEAR(f.log.coefficient("prompt_k").estimate, -0.05, 1e-12);
  EXPECT_NEAR(f.log.coefficient("t_min").estimate, -0.01, 1e-12);
  ASSERT_EQ(f.relative_effects.size(), 5U);
  EXPECT_EQ(f.relative_effects[2].name, "cache=q4_0");
  EXPECT_NEAR(f.relative_effects[2].relative, -0.2, 1e-12);
  EXPECT_NEAR(f.relative_effects[3].relative, -0.1, 1e-12);
  EXPECT_NEAR(f.relative_effects[4].relative, 0.2, 1e-12);
  EXPECT_NEAR(f.log.r_squared, 1.0, 1e-14);
  EXPECT_LT(f.linear.r_squared, 1.0);  // the multiplicative model is not linear in the metric
}

TEST(Model, DesignPointForAReferencePrediction) {
  const ModelSpec s = spec();
  const std::vector<ModelRow> rows = noiseless_rows();
  const Design d = build_design(s, rows, true);
  const ModelFit f = fit_model(s, rows);
  const ModelRow point{{1.0}, {"f16", "4k"}, 0.0, 0.0};
  const Eigen::VectorXd x0 = design_point(s, d, point);
  EXPECT_EQ(x0.size(), 6);
  EXPECT_NEAR(std::exp(predict(f.log, x0).estimate), 40.0 * std::exp(-0.05), 1e-10);
  const ModelRow unknown{{1.0}, {"bf16", "4k"}, 0.0, 0.0};
  EXPECT_THROW(design_point(s, d, unknown), Error);
}

TEST(Model, ErrorsNameTheProblem) {
  std::vector<ModelRow> rows = noiseless_rows();
  ModelSpec s = spec();
  s.categorical[1].reference = "16k";
  try {
    build_design(s, rows, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("factor 'ctx': reference level '16k'"), std::string::npos);
  }
  rows[5].value = 0.0;
  try {
    build_design(spec(), rows, true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model row 5"), std::string::npos);
  }
  rows[5].numeric.clear();
  EXPECT_THROW(build_design(spec(), rows, false), Error);
}

TEST(Model, ConfoundedFactorIsACollinearityError) {
  // A build factor that coincides with the context factor cannot be told apart from it.
  std::vector<ModelRow> rows = noiseless_rows();
  ModelSpec s = spec();
  s.categorical.push_back({"build", ""});
  for (ModelRow& r : rows) {
    r.categorical.push_back(r.categorical[1] == "8k" ? "candidate" : "baseline");
  }
  try {
    fit_model(s, rows);
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank-deficient"), std::string::npos) << what;
    EXPECT_TRUE(what.find("'build=candidate' is collinear with 'ctx=8k'") != std::string::npos ||
                what.find("'ctx=8k' is collinear with 'build=candidate'") != std::string::npos)
        << what;
  }
}

TEST(Model, JsonCarriesBothFits) {
  const nlohmann::json j = fit_model(spec(), noiseless_rows());
  EXPECT_EQ(j.at("names").size(), 6U);
  EXPECT_TRUE(j.contains("linear"));
  EXPECT_TRUE(j.contains("log"));
  EXPECT_EQ(j.at("dummies").at(0).at("reference"), "f16");
  EXPECT_EQ(j.at("relative_effects").size(), 5U);
}

}  // namespace
}  // namespace kvbench::stats
