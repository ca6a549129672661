#pragma once
// Drift as a slow-down: a metric modelled as (shape of the factors) x g(t),
//   y_i = (X_i β) · g(t_i) + ε_i,   g(t) = exp(δ₁·t + δ₂·t² + ...),   g(0) = 1,
// fitted by Gauss-Newton least squares on the metric's own scale. A machine that clocks down
// makes every call proportionally longer (or slower), which an additive time term cannot
// absorb: it leaks into the slopes. Here β is the shape at the run's starting speed (t = 0) in
// the metric's units, so a slope of prompt length is "ms per 1,000 tokens at the start".
//
// Uncertainty: the asymptotic covariance s²(JᵀJ)⁻¹ of the Jacobian J at the optimum, with
// t-based intervals on n - p degrees of freedom (fit_ols on the weighted, linearised problem).

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "harness/stats/ols.h"

namespace kvbench::stats {

struct DriftFitOptions {
  int max_iterations = 100;
  double tolerance = 1e-10;  // relative change of the RSS that ends the iteration
  double level = 0.95;
};

struct DriftFit {
  std::vector<std::string> shape_names;  // the columns of X
  std::vector<std::string> time_names;   // "t_min", "t_min^2", ...
  // Every parameter (β then δ) with SE, t, p and CI; residuals and RSS on the metric's scale;
  // Durbin-Watson of the relative residuals e_i / ŷ_i over the given row order (a slow-down the
  // model misses shows there whatever the size of each call).
  OlsFit fit;
  Eigen::MatrixXd covariance;  // of (β, δ)
  int iterations = 0;
  bool converged = false;
  double relative_rss = 0.0;          // Σ (e_i / ŷ_i)²: what the fit minimises
  double relative_residual_sd = 0.0;  // sqrt(relative RSS / df): the spread as a fraction
  double bic = 0.0;                   // n·log(relative RSS / n) + p·log(n)

  // g(t) with its CI (delta method on log g).
  double slow_down(double t_min) const;
  Interval slow_down_ci(double t_min) const;
  // aᵀθ over all parameters (β then δ) with its t-based CI (delta method).
  struct Linear {
    double estimate = 0.0;
    double se = 0.0;
    Interval ci;
  };
  Linear combination(const Eigen::VectorXd& a) const;
  // The index of a shape column; throws kvbench::Error if absent.
  Eigen::Index shape_index(const std::string& name) const;
};

// Fits y = (Xβ)·exp(Tδ), with errors proportional to the mean (a call's spread is a fraction
// of its time): weighted least squares, weights 1/ŷ², by Gauss-Newton. X holds the shape columns
// (its first usually the intercept), T the time basis columns (t, t², ...: zero at the first call).
// Throws kvbench::Error on mismatched sizes, n <= p, non-finite input, a value <= 0, a
// rank-deficient Jacobian, or a fitted g outside 0.1-10 over the calls (a slow-down these calls
// cannot tell from noise). Starts from the shape's relative least squares with δ = 0 and halves a
// step that does not lower the weighted RSS.
DriftFit fit_drift(const Eigen::MatrixXd& x, const std::vector<std::string>& shape_names,
                   const Eigen::MatrixXd& t, const std::vector<std::string>& time_names,
                   const Eigen::VectorXd& y, const DriftFitOptions& options = {});

// The extra-sum-of-squares F test of a nested pair of fits (reduced inside full): lack of fit
// of a shape against the saturated cell-means model, or whether a term earns its place.
struct FTest {
  double f = 0.0;
  double df1 = 0.0;
  double df2 = 0.0;
  double p = 1.0;
};
std::optional<FTest> nested_f_test(const DriftFit& reduced, const DriftFit& full);

// The time basis of log g of degree d: t, t², ..., t^d, named t_min, t_min^2, ...
Eigen::MatrixXd time_basis(const Eigen::VectorXd& t_min, int degree);
std::vector<std::string> time_basis_names(int degree);

// The criterion that chooses the smoothness of g: degrees 1 to max_degree of log g are fitted
// (each keeping two residual degrees of freedom; a degree d > 1 only with at least
// kCallsPerTimeDegree·d calls beyond the shape's parameters) and the lowest BIC wins. Returns the
// chosen fit; `bics` (when given) gets the BIC of each degree fitted.
inline constexpr int kCallsPerTimeDegree = 10;
DriftFit fit_drift_smooth(const Eigen::MatrixXd& x, const std::vector<std::string>& shape_names,
                          const Eigen::VectorXd& t_min, const Eigen::VectorXd& y, int max_degree,
                          std::vector<double>* bics = nullptr, const DriftFitOptions& options = {});

void to_json(nlohmann::json& j, const DriftFit& fit);
void to_json(nlohmann::json& j, const FTest& test);

}  // namespace kvbench::stats
