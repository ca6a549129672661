#pragma once
// Robust cross-checks of the OLS fit: Huber M-estimation by iteratively reweighted least squares,
// and the Theil–Sen slope for one predictor (the drift of the anchor probes over time).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "harness/stats/descriptive.h"

namespace kvbench::stats {

struct HuberOptions {
  double k = 1.345;  // tuning constant, in units of the robust scale
  std::size_t max_iterations = 50;
  double tolerance = 1e-8;  // stop when every |Δβ_j| <= tolerance·(|β_j| + SE_OLS_j)
};

struct RobustCoefficient {
  std::string name;
  double estimate = 0.0;
  double ols_estimate = 0.0;
  double ols_se = 0.0;
  bool differs_from_ols = false;  // |estimate - ols_estimate| > ols_se
};

struct HuberFit {
  std::vector<RobustCoefficient> coefficients;
  double k = 0.0;
  double scale = 0.0;  // 1.4826·MAD of the final residuals
  std::size_t iterations = 0;
  bool converged = false;
  bool any_differs_from_ols = false;
  Eigen::VectorXd weights;  // final IRLS weight of each row, in (0, 1]
};

// Huber M-estimate of y = Xβ + ε (Huber 1964; IRLS as in Holland & Welsch 1977). Starts from
// OLS; each iteration sets σ = 1.4826·MAD(residuals), weights w_i = min(1, k·σ/|e_i|), and solves
// the weighted problem by QR. Same preconditions and errors as fit_ols; throws kvbench::Error if
// a weighted design becomes rank-deficient.
HuberFit fit_huber(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                   const std::vector<std::string>& names, const HuberOptions& options = {});

// How the Theil–Sen slope CI is computed.
//   kendall: the order-statistic interval of Sen (1968) from the null distribution of Kendall's
//            S: C = z_{(1+level)/2}·sqrt(Var S), Var S = [n(n-1)(2n+5) - Σ t(t-1)(2t+5)]/18 over
//            groups of tied y; with N pairwise slopes, M1 = (N - C)/2 and M2 = (N + C)/2, the CI
//            is [slope_(M1), slope_(M2+1)] (1-based order statistics, interpolated linearly
//            when fractional, clamped to [1, N]). Deterministic; suits small n.
//   bootstrap: percentile CI of the slope over resampled (x, y) pairs (seeded); resamples whose
//            x values are all equal are skipped.
enum class TheilSenCi { kendall, bootstrap };
NLOHMANN_JSON_SERIALIZE_ENUM(TheilSenCi, {{TheilSenCi::kendall, "kendall"},
                                          {TheilSenCi::bootstrap, "bootstrap"}})

struct TheilSenOptions {
  double level = 0.95;
  TheilSenCi ci_method = TheilSenCi::kendall;
  std::size_t resamples = 2000;  // bootstrap only
  std::uint64_t seed = 1;        // bootstrap only
};

struct TheilSenFit {
  std::size_t n = 0;
  std::size_t pairs = 0;   // pairs with distinct x, i.e. slopes in the median
  double slope = 0.0;      // median of (y_j - y_i)/(x_j - x_i) over pairs with x_i != x_j
  double intercept = 0.0;  // median of y_i - slope·x_i (the level at x = 0)
  Interval slope_ci;
  TheilSenCi ci_method = TheilSenCi::kendall;
  std::size_t resamples = 0;  // bootstrap resamples used (0 for kendall)
  std::uint64_t seed = 0;
};

// Theil (1950) – Sen (1968) slope with a CI. Throws kvbench::Error on a length mismatch,
// non-finite values, or fewer than two distinct x values.
TheilSenFit theil_sen(std::span<const double> x, std::span<const double> y,
                      const TheilSenOptions& options = {});

// Drift over [x_start, x_end] relative to the fitted level at x_start:
// slope·(x_end - x_start) / (intercept + slope·x_start). Signed; NaN if that level is 0.
double relative_drift(const TheilSenFit& fit, double x_start, double x_end);

void to_json(nlohmann::json& j, const RobustCoefficient& c);
void to_json(nlohmann::json& j, const HuberFit& fit);
void to_json(nlohmann::json& j, const TheilSenFit& fit);

}  // namespace kvbench::stats
