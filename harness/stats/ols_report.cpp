// Predictions, relative effects and JSON of OLS fits.

#include <cmath>
#include <vector>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"
#include "harness/stats/ols.h"

namespace kvbench::stats {
namespace {

std::vector<double> to_vector(const Eigen::VectorXd& v) {
  return {v.data(), v.data() + v.size()};
}

nlohmann::json matrix_json(const Eigen::MatrixXd& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    rows.push_back(to_vector(m.row(i).transpose()));
  }
  return rows;
}

double t_critical(double level, double df) {
  if (!(level > 0.0 && level < 1.0)) {
    throw Error("confidence level must be in (0, 1), got " + std::to_string(level));
  }
  return t_quantile(0.5 + level / 2.0, df);
}

}  // namespace

Prediction predict(const OlsFit& fit, const Eigen::VectorXd& x0, double level) {
  if (x0.size() != static_cast<Eigen::Index>(fit.p)) {
    throw Error("predict: the point has " + std::to_string(x0.size()) + " entries, the fit has " +
                std::to_string(fit.p) + " coefficients");
  }
  Eigen::VectorXd beta(x0.size());
  for (Eigen::Index j = 0; j < x0.size(); ++j) {
    beta(j) = fit.coefficients[static_cast<std::size_t>(j)].estimate;
  }
  Prediction out;
  out.df = fit.df;
  out.estimate = x0.dot(beta);
  const double var_mean = x0.dot(fit.covariance * x0);
  out.se_mean = std::sqrt(var_mean);
  out.se_prediction = std::sqrt(fit.residual_se * fit.residual_se + var_mean);
  const double t = t_critical(level, fit.df);
  out.mean_ci = {out.estimate - t * out.se_mean, out.estimate + t * out.se_mean, level};
  out.prediction_interval = {out.estimate - t * out.se_prediction,
                             out.estimate + t * out.se_prediction, level};
  return out;
}

RelativeEffect relative_effect(const OlsFit& log_fit, std::string_view name, double level) {
  const Coefficient& c = log_fit.coefficient(name);
  const double t = t_critical(level, log_fit.df);
  RelativeEffect out;
  out.name = c.name;
  out.gamma = c.estimate;
  out.se = c.se;
  out.df = log_fit.df;
  out.relative = std::expm1(c.estimate);
  out.ci = {std::expm1(c.estimate - t * c.se), std::expm1(c.estimate + t * c.se), level};
  return out;
}

void to_json(nlohmann::json& j, const Coefficient& c) {
  j = {{"name", c.name},   {"estimate", c.estimate},
       {"se", c.se},       {"t", c.t},
       {"p", c.p},         {"ci", c.ci},
       {"vif", c.vif},     {"se_hc3", c.se_hc3},
       {"p_hc3", c.p_hc3}, {"ci_hc3", c.ci_hc3}};
}

void to_json(nlohmann::json& j, const OlsFit& fit) {
  j = {{"method", "OLS, column-pivoted Householder QR"},
       {"coefficients", fit.coefficients},
       {"n", fit.n},
       {"p", fit.p},
       {"df", fit.df},
       {"level", fit.level},
       {"t_critical", fit.t_critical},
       {"has_intercept", fit.has_intercept},
       {"mean_y", fit.mean_y},
       {"rss", fit.rss},
       {"tss", fit.tss},
       {"r_squared", fit.r_squared},
       {"adj_r_squared", fit.adj_r_squared},
       {"residual_se", fit.residual_se},
       {"cv_resid", fit.cv_resid},
       {"f_statistic", fit.f_statistic},
       {"f_df1", fit.f_df1},
       {"f_df2", fit.df},
       {"f_p", fit.f_p},
       {"durbin_watson", fit.durbin_watson},
       {"max_abs_studentized", fit.max_abs_studentized},
       {"studentized_limit", kStudentizedLimit},
       {"studentized_flags", fit.studentized_flags},
       {"cooks_limit", kCooksFactor / static_cast<double>(fit.n)},
       {"cooks_flags", fit.cooks_flags},
       {"fitted", to_vector(fit.fitted)},
       {"residuals", to_vector(fit.residuals)},
       {"leverage", to_vector(fit.leverage)},
       {"studentized", to_vector(fit.studentized)},
       {"cooks_distance", to_vector(fit.cooks_distance)},
       {"covariance", matrix_json(fit.covariance)}};
  if (fit.covariance_hc3.size() > 0) {
    j["covariance_hc3"] = matrix_json(fit.covariance_hc3);
  }
}

void to_json(nlohmann::json& j, const Prediction& prediction) {
  j = {{"estimate", prediction.estimate},
       {"se_mean", prediction.se_mean},
       {"se_prediction", prediction.se_prediction},
       {"df", prediction.df},
       {"mean_ci", prediction.mean_ci},
       {"prediction_interval", prediction.prediction_interval}};
}

void to_json(nlohmann::json& j, const RelativeEffect& effect) {
  j = {{"name", effect.name}, {"gamma", effect.gamma},       {"se", effect.se},
       {"df", effect.df},     {"relative", effect.relative}, {"ci", effect.ci}};
}

}  // namespace kvbench::stats
