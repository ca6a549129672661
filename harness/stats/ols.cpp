#include "harness/stats/ols.h"

#include <cmath>
#include <limits>

#include "harness/core/error.h"
#include "harness/stats/distributions.h"
#include "harness/stats/least_squares.h"

namespace kvbench::stats {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

void validate(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
              const std::vector<std::string>& names, const OlsOptions& options) {
  if (x.rows() != y.size()) {
    throw Error("fit_ols: X has " + std::to_string(x.rows()) + " rows but y has " +
                std::to_string(y.size()) + " values");
  }
  if (static_cast<std::size_t>(x.cols()) != names.size()) {
    throw Error("fit_ols: X has " + std::to_string(x.cols()) + " columns but " +
                std::to_string(names.size()) + " names were given");
  }
  if (x.rows() <= x.cols()) {
    throw Error("fit_ols: need more rows than columns (" + std::to_string(x.rows()) + " rows, " +
                std::to_string(x.cols()) + " columns)");
  }
  if (!x.allFinite() || !y.allFinite()) {
    throw Error("fit_ols: X or y holds a non-finite value");
  }
  if (!(options.level > 0.0 && options.level < 1.0)) {
    throw Error("fit_ols: confidence level must be in (0, 1)");
  }
}

bool is_constant_nonzero(const Eigen::VectorXd& column) {
  return column(0) != 0.0 && (column.array() == column(0)).all();
}

bool has_constant_column(const Eigen::MatrixXd& x) {
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    if (is_constant_nonzero(x.col(j))) {
      return true;
    }
  }
  return false;
}

void fill_fit_quality(const Eigen::VectorXd& y, OlsFit& fit) {
  const double n = static_cast<double>(fit.n);
  fit.mean_y = y.mean();
  fit.rss = fit.residuals.squaredNorm();
  fit.tss = fit.has_intercept ? (y.array() - fit.mean_y).square().sum() : y.squaredNorm();
  fit.r_squared = fit.tss > 0.0 ? 1.0 - fit.rss / fit.tss : kNoValue;
  const double model_df = static_cast<double>(fit.p) - (fit.has_intercept ? 1.0 : 0.0);
  const double base = fit.has_intercept ? n - 1.0 : n;
  fit.adj_r_squared = 1.0 - (1.0 - fit.r_squared) * base / fit.df;
  fit.residual_se = std::sqrt(fit.rss / fit.df);
  fit.cv_resid = fit.mean_y != 0.0 ? fit.residual_se / fit.mean_y : kNoValue;
  fit.f_df1 = model_df;
  const double f =
      model_df > 0.0 ? ((fit.tss - fit.rss) / model_df) / (fit.rss / fit.df) : kNoValue;
  // An F below 0 (a design whose constant column is not the model's intercept, as in a weighted,
  // linearised fit) or a perfect fit has no F test.
  if (std::isfinite(f) && f >= 0.0) {
    fit.f_statistic = f;
    fit.f_p = f_upper_tail(fit.f_statistic, model_df, fit.df);
  } else {
    fit.f_statistic = kNoValue;
    fit.f_p = kNoValue;
  }
}

Interval t_interval(double estimate, double se, double t_crit, double level) {
  return {estimate - t_crit * se, estimate + t_crit * se, level};
}

void fill_coefficients(const Eigen::VectorXd& beta, const std::vector<std::string>& names,
                       OlsFit& fit) {
  fit.coefficients.resize(fit.p);
  for (std::size_t j = 0; j < fit.p; ++j) {
    const auto k = static_cast<Eigen::Index>(j);
    Coefficient& c = fit.coefficients[j];
    c.name = names[j];
    c.estimate = beta(k);
    c.se = std::sqrt(fit.covariance(k, k));
    c.t = c.estimate / c.se;
    c.p = t_two_sided_p(c.t, fit.df);
    c.ci = t_interval(c.estimate, c.se, fit.t_critical, fit.level);
    c.vif = kNoValue;
    c.se_hc3 = kNoValue;
    c.p_hc3 = kNoValue;
    c.ci_hc3 = {kNoValue, kNoValue, fit.level};
  }
}

void fill_influence(const QrLeastSquares& qr, OlsFit& fit) {
  fit.leverage = qr.leverage();
  const auto n = static_cast<Eigen::Index>(fit.n);
  fit.studentized.resize(n);
  fit.cooks_distance.resize(n);
  fit.max_abs_studentized = 0.0;
  const double cooks_limit = kCooksFactor / static_cast<double>(fit.n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double h = fit.leverage(i);
    const double denom = fit.residual_se * std::sqrt(1.0 - h);
    const double r = denom > 0.0 ? fit.residuals(i) / denom : kNoValue;
    fit.studentized(i) = r;
    fit.cooks_distance(i) = r * r * h / (static_cast<double>(fit.p) * (1.0 - h));
    if (std::abs(r) > fit.max_abs_studentized) {
      fit.max_abs_studentized = std::abs(r);
    }
    if (std::abs(r) > kStudentizedLimit) {
      fit.studentized_flags.push_back(static_cast<std::size_t>(i));
    }
    if (fit.cooks_distance(i) > cooks_limit) {
      fit.cooks_flags.push_back(static_cast<std::size_t>(i));
    }
  }
}

void fill_hc3(const QrLeastSquares& qr, OlsFit& fit) {
  const Eigen::VectorXd w =
      (fit.residuals.array() / (1.0 - fit.leverage.array())).square().matrix();
  fit.covariance_hc3 = qr.sandwich(w);
  for (std::size_t j = 0; j < fit.p; ++j) {
    const auto k = static_cast<Eigen::Index>(j);
    Coefficient& c = fit.coefficients[j];
    c.se_hc3 = std::sqrt(fit.covariance_hc3(k, k));
    c.p_hc3 = t_two_sided_p(c.estimate / c.se_hc3, fit.df);
    c.ci_hc3 = t_interval(c.estimate, c.se_hc3, fit.t_critical, fit.level);
  }
}

void fill_vif(const Eigen::MatrixXd& x, OlsFit& fit) {
  for (std::size_t j = 0; j < fit.p; ++j) {
    fit.coefficients[j].vif = variance_inflation(x, static_cast<Eigen::Index>(j));
  }
}

}  // namespace

std::size_t OlsFit::index_of(std::string_view name) const {
  for (std::size_t j = 0; j < coefficients.size(); ++j) {
    if (coefficients[j].name == name) {
      return j;
    }
  }
  throw Error("OLS fit has no coefficient named '" + std::string(name) + "'");
}

OlsFit fit_ols(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
               const std::vector<std::string>& names, const OlsOptions& options) {
  validate(x, y, names, options);
  const QrLeastSquares qr(x);
  if (!qr.full_rank()) {
    throw Error("fit_ols: X is rank-deficient: " + qr.collinearity_message(names));
  }
  OlsFit fit;
  fit.n = static_cast<std::size_t>(x.rows());
  fit.p = static_cast<std::size_t>(x.cols());
  fit.df = static_cast<double>(fit.n - fit.p);
  fit.level = options.level;
  fit.t_critical = t_quantile(0.5 + options.level / 2.0, fit.df);
  fit.has_intercept = has_constant_column(x);
  const Eigen::VectorXd beta = qr.solve(y);
  fit.fitted = x * beta;
  fit.residuals = y - fit.fitted;
  fill_fit_quality(y, fit);
  fit.covariance = fit.residual_se * fit.residual_se * qr.inverse_gram();
  fill_coefficients(beta, names, fit);
  fill_influence(qr, fit);
  fit.durbin_watson = durbin_watson(fit.residuals);
  if (options.hc3) {
    fill_hc3(qr, fit);
  }
  if (options.vif) {
    fill_vif(x, fit);
  }
  return fit;
}

double durbin_watson(const Eigen::VectorXd& residuals) {
  const Eigen::Index n = residuals.size();
  const double denom = residuals.squaredNorm();
  if (n < 2 || denom == 0.0) {
    return kNoValue;
  }
  return (residuals.tail(n - 1) - residuals.head(n - 1)).squaredNorm() / denom;
}

double variance_inflation(const Eigen::MatrixXd& x, Eigen::Index j) {
  if (x.cols() < 2 || is_constant_nonzero(x.col(j))) {
    return kNoValue;
  }
  Eigen::MatrixXd others(x.rows(), x.cols() - 1);
  others << x.leftCols(j), x.rightCols(x.cols() - j - 1);
  const QrLeastSquares qr(others);
  if (!qr.full_rank()) {
    return kNoValue;
  }
  const Eigen::VectorXd target = x.col(j);
  const double rss = (target - others * qr.solve(target)).squaredNorm();
  const double tss = has_constant_column(others) ? (target.array() - target.mean()).square().sum()
                                                 : target.squaredNorm();
  return tss / rss;  // 1 / (1 - R²) with R² = 1 - RSS/TSS
}

}  // namespace kvbench::stats
