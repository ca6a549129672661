#include "harness/stats/drift_model.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"
#include "harness/stats/least_squares.h"

namespace kvbench::stats {

namespace {

struct State {
  Eigen::VectorXd theta;
  Eigen::VectorXd fitted;
  Eigen::VectorXd g;
};

State evaluate(const Eigen::MatrixXd& x, const Eigen::MatrixXd& t, const Eigen::VectorXd& theta) {
  State s;
  s.theta = theta;
  const Eigen::VectorXd f = x * theta.head(x.cols());
  s.g = (t * theta.tail(t.cols())).array().exp().matrix();
  s.fitted = f.cwiseProduct(s.g);
  return s;
}

Eigen::MatrixXd jacobian(const Eigen::MatrixXd& x, const Eigen::MatrixXd& t, const State& s) {
  Eigen::MatrixXd j(x.rows(), x.cols() + t.cols());
  j.leftCols(x.cols()) = x.array().colwise() * s.g.array();
  j.rightCols(t.cols()) = t.array().colwise() * s.fitted.array();
  return j;
}

// Σ ((y - ŷ) / w)²: the squared relative residuals when w = ŷ of the weighting state.
double weighted_rss(const Eigen::VectorXd& y, const Eigen::VectorXd& fitted,
                    const Eigen::VectorXd& w) {
  return ((y - fitted).array() / w.array()).square().sum();
}

bool positive(const Eigen::VectorXd& v) {
  return v.allFinite() && (v.array() > 0).all();
}

// The inference at the optimum `s`: the coefficients with their SEs and CIs at `level`, the
// residual figures, and the BIC on the relative scale.
void infer(const Eigen::MatrixXd& x, const Eigen::MatrixXd& t, const Eigen::VectorXd& y,
           const State& s, const std::vector<std::string>& names, double level, DriftFit& out) {
  const Eigen::Index n = x.rows();
  const Eigen::Index p = x.cols() + t.cols();
  // The weighted, linearised problem at the optimum: its solution is θ (to the tolerance), its
  // covariance φ(J̃ᵀJ̃)⁻¹ with φ the squared relative residual SD.
  const Eigen::MatrixXd j = jacobian(x, t, s).array().colwise() / s.fitted.array();
  const Eigen::VectorXd rel = (y - s.fitted).array() / s.fitted.array();
  OlsOptions ols;
  ols.level = level;
  ols.vif = false;
  out.fit = fit_ols(j, j * s.theta + rel, names, ols);
  for (Eigen::Index k = 0; k < p; ++k) {
    auto& c = out.fit.coefficients[static_cast<std::size_t>(k)];
    c.estimate = s.theta(k);
    c.t = c.se > 0 ? c.estimate / c.se : std::numeric_limits<double>::quiet_NaN();
    c.p = t_two_sided_p(c.t, out.fit.df);
    c.ci.lower = c.estimate - out.fit.t_critical * c.se;
    c.ci.upper = c.estimate + out.fit.t_critical * c.se;
  }
  out.relative_rss = rel.squaredNorm();
  out.relative_residual_sd = std::sqrt(out.relative_rss / out.fit.df);
  out.fit.fitted = s.fitted;
  out.fit.residuals = y - s.fitted;
  out.fit.rss = out.fit.residuals.squaredNorm();
  out.fit.mean_y = y.mean();
  out.fit.tss = (y.array() - y.mean()).square().sum();
  out.fit.r_squared = out.fit.tss > 0 ? 1.0 - out.fit.rss / out.fit.tss : 0.0;
  out.fit.residual_se = std::sqrt(out.fit.rss / out.fit.df);
  out.fit.cv_resid = out.fit.residual_se / out.fit.mean_y;
  out.fit.durbin_watson = durbin_watson(rel);
  const auto nd = static_cast<double>(n);
  out.bic = nd * std::log(out.relative_rss / nd) + static_cast<double>(p) * std::log(nd);
}

}  // namespace

DriftFit fit_drift(const Eigen::MatrixXd& x, const std::vector<std::string>& shape_names,
                   const Eigen::MatrixXd& t, const std::vector<std::string>& time_names,
                   const Eigen::VectorXd& y, const DriftFitOptions& options) {
  const Eigen::Index n = x.rows();
  const Eigen::Index p = x.cols() + t.cols();
  if (t.rows() != n || y.size() != n || static_cast<std::size_t>(x.cols()) != shape_names.size() ||
      static_cast<std::size_t>(t.cols()) != time_names.size()) {
    throw Error("drift model: the shape, time and value columns do not match");
  }
  if (n <= p) {
    throw Error(fmt::format("drift model: {} calls are too few for {} parameters", n, p));
  }
  if (!x.allFinite() || !t.allFinite() || !positive(y)) {
    throw Error("drift model: needs finite inputs and values > 0");
  }
  std::vector<std::string> names = shape_names;
  names.insert(names.end(), time_names.begin(), time_names.end());

  // Start: the shape by least squares on the relative scale (rows divided by y), δ = 0.
  const Eigen::MatrixXd xs = x.array().colwise() / y.array();
  const QrLeastSquares start(xs);
  if (!start.full_rank()) {
    throw Error("drift model: " + start.collinearity_message(shape_names));
  }
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(p);
  theta.head(x.cols()) = start.solve(Eigen::VectorXd::Ones(n));
  State s = evaluate(x, t, theta);
  if (!positive(s.fitted)) {
    throw Error("drift model: the shape predicts a value <= 0 for some call");
  }
  DriftFit out;
  // Gauss-Newton with weights 1/ŷ² refreshed every step (the quasi-likelihood of errors
  // proportional to the mean), halving a step that does not lower the weighted RSS.
  for (out.iterations = 0; out.iterations < options.max_iterations; ++out.iterations) {
    const Eigen::VectorXd w = s.fitted;
    const Eigen::MatrixXd j = jacobian(x, t, s).array().colwise() / w.array();
    const QrLeastSquares qr(j);
    if (!qr.full_rank()) {
      throw Error("drift model: " + qr.collinearity_message(names));
    }
    Eigen::VectorXd step = qr.solve(((y - s.fitted).array() / w.array()).matrix());
    // A trust region on g: one step changes log g by at most 0.5 at any call.
    const double g_change = (t * step.tail(t.cols())).cwiseAbs().maxCoeff();
    if (g_change > 0.5) {
      step *= 0.5 / g_change;
    }
    const double before = weighted_rss(y, s.fitted, w);
    bool moved = false;
    for (double lambda = 1.0; lambda > 1e-6; lambda /= 2) {
      State next = evaluate(x, t, s.theta + lambda * step);
      const double after = positive(next.fitted) ? weighted_rss(y, next.fitted, w)
                                                 : std::numeric_limits<double>::infinity();
      if (after <= before) {
        const double change = step.cwiseAbs().dot(Eigen::VectorXd::Ones(p)) * lambda /
                              std::max(1e-300, s.theta.cwiseAbs().sum());
        s = std::move(next);
        moved = change > options.tolerance;
        break;
      }
    }
    if (!moved) {
      out.converged = true;
      break;
    }
  }
  const double g_min = s.g.minCoeff();
  const double g_max = s.g.maxCoeff();
  if (!(g_min > 0.1) || !(g_max < 10.0)) {
    throw Error(fmt::format(
        "drift model: the fitted slow-down ranges over {:.3g}-{:.3g} of the starting speed: not "
        "estimable from these calls",
        g_min, g_max));
  }
  infer(x, t, y, s, names, options.level, out);
  out.covariance = out.fit.covariance;
  out.shape_names = shape_names;
  out.time_names = time_names;
  return out;
}

Eigen::Index DriftFit::shape_index(const std::string& name) const {
  for (std::size_t k = 0; k < shape_names.size(); ++k) {
    if (shape_names[k] == name) {
      return static_cast<Eigen::Index>(k);
    }
  }
  throw Error("drift model: no term '" + name + "'");
}

DriftFit::Linear DriftFit::combination(const Eigen::VectorXd& a) const {
  Linear out;
  Eigen::VectorXd theta(static_cast<Eigen::Index>(fit.coefficients.size()));
  for (Eigen::Index k = 0; k < theta.size(); ++k) {
    theta(k) = fit.coefficients[static_cast<std::size_t>(k)].estimate;
  }
  out.estimate = a.dot(theta);
  out.se = std::sqrt(std::max(0.0, a.dot(covariance * a)));
  out.ci = {out.estimate - fit.t_critical * out.se, out.estimate + fit.t_critical * out.se,
            fit.level};
  return out;
}

namespace {

// The combination aᵀθ that is log g(t): t^k on the k-th time term.
Eigen::VectorXd log_g_weights(const DriftFit& f, double t_min) {
  Eigen::VectorXd a = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(f.fit.coefficients.size()));
  const auto first = static_cast<Eigen::Index>(f.shape_names.size());
  for (std::size_t k = 0; k < f.time_names.size(); ++k) {
    a(first + static_cast<Eigen::Index>(k)) = std::pow(t_min, static_cast<double>(k + 1));
  }
  return a;
}

}  // namespace

double DriftFit::slow_down(double t_min) const {
  return std::exp(combination(log_g_weights(*this, t_min)).estimate);
}

Interval DriftFit::slow_down_ci(double t_min) const {
  const auto c = combination(log_g_weights(*this, t_min));
  return {std::exp(c.ci.lower), std::exp(c.ci.upper), c.ci.level};
}

std::optional<FTest> nested_f_test(const DriftFit& reduced, const DriftFit& full) {
  const double df_r = reduced.fit.df;
  const double df_f = full.fit.df;
  if (!(df_f > 0) || !(df_r > df_f) || !(full.relative_rss > 0)) {
    return std::nullopt;
  }
  FTest t;
  t.df1 = df_r - df_f;
  t.df2 = df_f;
  t.f = std::max(0.0, (reduced.relative_rss - full.relative_rss) / t.df1) /
        (full.relative_rss / df_f);
  t.p = f_upper_tail(t.f, t.df1, t.df2);
  return t;
}

Eigen::MatrixXd time_basis(const Eigen::VectorXd& t_min, int degree) {
  Eigen::MatrixXd t(t_min.size(), degree);
  for (int k = 0; k < degree; ++k) {
    t.col(k) = t_min.array().pow(k + 1).matrix();
  }
  return t;
}

std::vector<std::string> time_basis_names(int degree) {
  std::vector<std::string> names;
  for (int k = 1; k <= degree; ++k) {
    names.push_back(k == 1 ? std::string("t_min") : fmt::format("t_min^{}", k));
  }
  return names;
}

DriftFit fit_drift_smooth(const Eigen::MatrixXd& x, const std::vector<std::string>& shape_names,
                          const Eigen::VectorXd& t_min, const Eigen::VectorXd& y, int max_degree,
                          std::vector<double>* bics, const DriftFitOptions& options) {
  std::optional<DriftFit> best;
  for (int d = 1; d <= max_degree; ++d) {
    if (x.rows() <= x.cols() + d + 1 || (d > 1 && x.rows() < x.cols() + kCallsPerTimeDegree * d)) {
      break;  // two residual degrees of freedom at least; a smoother g needs the calls for it
    }
    DriftFit f;
    try {
      f = fit_drift(x, shape_names, time_basis(t_min, d), time_basis_names(d), y, options);
    } catch (const Error&) {
      if (!best) {
        throw;
      }
      break;  // a higher degree that cannot be fitted is not chosen
    }
    if (bics != nullptr) {
      bics->push_back(f.bic);
    }
    if (!best || f.bic < best->bic) {
      best = std::move(f);
    }
  }
  if (!best) {
    throw Error(fmt::format("drift model: {} calls are too few", x.rows()));
  }
  return std::move(*best);
}

void to_json(nlohmann::json& j, const DriftFit& f) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& c : f.fit.coefficients) {
    params.push_back({{"name", c.name},
                      {"estimate", c.estimate},
                      {"se", c.se},
                      {"p", c.p},
                      {"ci", {c.ci.lower, c.ci.upper}}});
  }
  j = {{"shape", f.shape_names},
       {"time", f.time_names},
       {"parameters", params},
       {"n", f.fit.n},
       {"df", f.fit.df},
       {"rss", f.fit.rss},
       {"relative_rss", f.relative_rss},
       {"residual_se", f.fit.residual_se},
       {"relative_residual_sd", f.relative_residual_sd},
       {"durbin_watson", f.fit.durbin_watson},
       {"bic", f.bic},
       {"iterations", f.iterations},
       {"converged", f.converged}};
}

void to_json(nlohmann::json& j, const FTest& t) {
  j = {{"f", t.f}, {"df1", t.df1}, {"df2", t.df2}, {"p", t.p}};
}

}  // namespace kvbench::stats
