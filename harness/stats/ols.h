#pragma once
// Ordinary least squares with the diagnostics kvbench reports: per-coefficient SE, t, p and
// t-based CI; R², adjusted R², residual SE, CV of residuals, overall F; leverage, internally
// studentized residuals, Cook's distance, Durbin–Watson over row order, VIF; optional HC3 SEs;
// mean predictions with CI and prediction interval; relative effects exp(γ)-1 for log models.
// Formulas as results/README.md ("Statistics in the report") gives them; distributions come from
// Boost.Math.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "harness/stats/descriptive.h"

namespace kvbench::stats {

struct OlsOptions {
  double level = 0.95;  // two-sided confidence level of every coefficient CI
  bool hc3 = false;     // also compute HC3 heteroscedasticity-consistent SEs
  bool vif = true;      // compute the VIF of each non-constant column
};

struct Coefficient {
  std::string name;
  double estimate = 0.0;
  double se = 0.0;
  double t = 0.0;
  double p = 0.0;  // two-sided, Student t with df = n - p
  Interval ci;
  double vif = 0.0;     // NaN for a constant column, or when OlsOptions::vif is off
  double se_hc3 = 0.0;  // NaN unless OlsOptions::hc3
  double p_hc3 = 0.0;
  Interval ci_hc3;
};

// Flag rules: |studentized residual| > 3; Cook's distance > 4/n.
inline constexpr double kStudentizedLimit = 3.0;
inline constexpr double kCooksFactor = 4.0;

struct OlsFit {
  std::vector<Coefficient> coefficients;
  std::size_t n = 0;
  std::size_t p = 0;
  double df = 0.0;  // residual degrees of freedom n - p
  double level = 0.95;
  double t_critical = 0.0;     // t quantile used by the CIs
  bool has_intercept = false;  // a constant non-zero column exists (R², F are then centred)
  double mean_y = 0.0;
  double rss = 0.0;
  double tss = 0.0;  // centred with an intercept, else Σy²
  double r_squared = 0.0;
  double adj_r_squared = 0.0;
  double residual_se = 0.0;  // s = sqrt(RSS / df)
  double cv_resid = 0.0;     // s / mean(y)
  double f_statistic = 0.0;  // NaN when there is no model column beyond the intercept
  double f_df1 = 0.0;
  double f_p = 0.0;
  double durbin_watson = 0.0;  // over the given row order
  double max_abs_studentized = 0.0;
  Eigen::VectorXd fitted;
  Eigen::VectorXd residuals;
  Eigen::VectorXd leverage;
  Eigen::VectorXd studentized;     // e_i / (s·sqrt(1 - h_ii)); NaN where h_ii = 1 or s = 0
  Eigen::VectorXd cooks_distance;  // r_i²·h_ii / (p·(1 - h_ii))
  std::vector<std::size_t> studentized_flags;  // row indices
  std::vector<std::size_t> cooks_flags;        // row indices
  Eigen::MatrixXd covariance;                  // s²(XᵀX)⁻¹
  Eigen::MatrixXd covariance_hc3;              // empty unless OlsOptions::hc3

  // Position of the named coefficient; throws kvbench::Error if there is none.
  std::size_t index_of(std::string_view name) const;
  // The named coefficient; throws kvbench::Error if there is none.
  const Coefficient& coefficient(std::string_view name) const& {
    return coefficients[index_of(name)];
  }
  const Coefficient& coefficient(std::string_view name) const&& = delete;  // would dangle
};

// Fits y = Xβ + ε by column-pivoted Householder QR. X is n x p (include the intercept column
// yourself), names has p entries. Throws kvbench::Error on mismatched sizes, non-finite input,
// n <= p, or a rank-deficient X (the message names the collinear predictor).
OlsFit fit_ols(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
               const std::vector<std::string>& names, const OlsOptions& options = {});

// Durbin–Watson Σ(e_t - e_{t-1})² / Σe_t² over the given order; NaN for fewer than 2 values
// or all-zero residuals.
double durbin_watson(const Eigen::VectorXd& residuals);

// VIF of column j: 1 / (1 - R²) of column j regressed on all the other columns (R² centred when
// another column is a non-zero constant). NaN for a constant column or p = 1.
double variance_inflation(const Eigen::MatrixXd& x, Eigen::Index j);

struct Prediction {
  double estimate = 0.0;       // x0ᵀβ
  double se_mean = 0.0;        // s·sqrt(x0ᵀ(XᵀX)⁻¹x0)
  double se_prediction = 0.0;  // s·sqrt(1 + x0ᵀ(XᵀX)⁻¹x0)
  double df = 0.0;
  Interval mean_ci;
  Interval prediction_interval;  // for one new observation
};

// Mean prediction at x0 (length p, in the column order of the fit, intercept entry included)
// with its t-based CI and the prediction interval for a new call. Throws on a length mismatch.
Prediction predict(const OlsFit& fit, const Eigen::VectorXd& x0, double level = 0.95);

struct RelativeEffect {
  std::string name;
  double gamma = 0.0;  // the log-scale coefficient
  double se = 0.0;
  double df = 0.0;
  double relative = 0.0;  // exp(γ) - 1
  Interval ci;            // exp(γ ∓ t·SE) - 1
};

// Relative effect of a coefficient of a log-metric model, e.g. -0.032 for "3.2 % lower".
// Throws kvbench::Error for an unknown name.
RelativeEffect relative_effect(const OlsFit& log_fit, std::string_view name, double level = 0.95);

void to_json(nlohmann::json& j, const Coefficient& c);
void to_json(nlohmann::json& j, const OlsFit& fit);
void to_json(nlohmann::json& j, const Prediction& prediction);
void to_json(nlohmann::json& j, const RelativeEffect& effect);

}  // namespace kvbench::stats
