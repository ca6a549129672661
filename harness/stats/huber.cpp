#include <cmath>
#include <vector>

#include "harness/core/error.h"
#include "harness/stats/least_squares.h"
#include "harness/stats/ols.h"
#include "harness/stats/robust.h"

namespace kvbench::stats {
namespace {

double robust_scale(const Eigen::VectorXd& residuals) {
  return kMadScale * mad_raw(std::span<const double>(residuals.data(),
                                                     static_cast<std::size_t>(residuals.size())));
}

// w_i = 1 inside k·σ, k·σ/|e_i| outside. With σ = 0 every non-zero residual gets weight 0.
Eigen::VectorXd huber_weights(const Eigen::VectorXd& residuals, double k_sigma) {
  Eigen::VectorXd w(residuals.size());
  for (Eigen::Index i = 0; i < residuals.size(); ++i) {
    const double a = std::abs(residuals(i));
    w(i) = a <= k_sigma ? 1.0 : k_sigma / a;
  }
  return w;
}

Eigen::VectorXd weighted_solve(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                               const Eigen::VectorXd& w, const std::vector<std::string>& names) {
  const Eigen::VectorXd root = w.cwiseSqrt();
  const Eigen::MatrixXd xw = root.asDiagonal() * x;
  const QrLeastSquares qr(xw);
  if (!qr.full_rank()) {
    throw Error("fit_huber: the weighted design is rank-deficient: " +
                qr.collinearity_message(names));
  }
  return qr.solve(root.cwiseProduct(y));
}

bool converged(const Eigen::VectorXd& next, const Eigen::VectorXd& prev, const OlsFit& ols,
               double tolerance) {
  for (Eigen::Index j = 0; j < next.size(); ++j) {
    const double limit =
        tolerance * (std::abs(prev(j)) + ols.coefficients[static_cast<std::size_t>(j)].se);
    if (!(std::abs(next(j) - prev(j)) <= limit)) {
      return false;
    }
  }
  return true;
}

void fill_comparison(const Eigen::VectorXd& beta, const OlsFit& ols, HuberFit& fit) {
  fit.coefficients.resize(ols.p);
  fit.any_differs_from_ols = false;
  for (std::size_t j = 0; j < ols.p; ++j) {
    RobustCoefficient& c = fit.coefficients[j];
    c.name = ols.coefficients[j].name;
    c.estimate = beta(static_cast<Eigen::Index>(j));
    c.ols_estimate = ols.coefficients[j].estimate;
    c.ols_se = ols.coefficients[j].se;
    c.differs_from_ols = std::abs(c.estimate - c.ols_estimate) > c.ols_se;
    fit.any_differs_from_ols = fit.any_differs_from_ols || c.differs_from_ols;
  }
}

}  // namespace

HuberFit fit_huber(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                   const std::vector<std::string>& names, const HuberOptions& options) {
  if (!(options.k > 0.0) || options.max_iterations == 0) {
    throw Error("fit_huber: need k > 0 and max_iterations >= 1");
  }
  const OlsFit ols = fit_ols(x, y, names, {.level = 0.95, .hc3 = false, .vif = false});
  HuberFit fit;
  fit.k = options.k;
  Eigen::VectorXd beta(x.cols());
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    beta(j) = ols.coefficients[static_cast<std::size_t>(j)].estimate;
  }
  Eigen::VectorXd residuals = ols.residuals;
  while (fit.iterations < options.max_iterations && !fit.converged) {
    fit.scale = robust_scale(residuals);
    fit.weights = huber_weights(residuals, options.k * fit.scale);
    const Eigen::VectorXd next = weighted_solve(x, y, fit.weights, names);
    fit.converged = converged(next, beta, ols, options.tolerance);
    beta = next;
    residuals = y - x * beta;
    ++fit.iterations;
  }
  fit.scale = robust_scale(residuals);
  fill_comparison(beta, ols, fit);
  return fit;
}

}  // namespace kvbench::stats

namespace kvbench::stats {

void to_json(nlohmann::json& j, const RobustCoefficient& c) {
  j = {{"name", c.name},
       {"estimate", c.estimate},
       {"ols_estimate", c.ols_estimate},
       {"ols_se", c.ols_se},
       {"differs_from_ols", c.differs_from_ols}};
}

void to_json(nlohmann::json& j, const HuberFit& fit) {
  j = {{"method", "Huber M-estimation by IRLS, scale 1.4826*MAD of residuals"},
       {"coefficients", fit.coefficients},
       {"k", fit.k},
       {"scale", fit.scale},
       {"iterations", fit.iterations},
       {"converged", fit.converged},
       {"any_differs_from_ols", fit.any_differs_from_ols},
       {"weights",
        std::vector<double>(fit.weights.data(), fit.weights.data() + fit.weights.size())}};
}

}  // namespace kvbench::stats
