#include "harness/stats/bootstrap.h"

#include <algorithm>
#include <cmath>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/stats/least_squares.h"
#include "harness/stats/ols.h"

namespace kvbench::stats {
namespace {

// One row per resample that could be fitted, one column per coefficient.
std::vector<Eigen::VectorXd> resample_estimates(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                const BootstrapOptions& options) {
  Rng rng(options.seed);
  const Eigen::Index n = x.rows();
  Eigen::MatrixXd xb(n, x.cols());
  Eigen::VectorXd yb(n);
  std::vector<Eigen::VectorXd> out;
  out.reserve(options.resamples);
  for (std::size_t r = 0; r < options.resamples; ++r) {
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto row = static_cast<Eigen::Index>(rng.below(static_cast<std::size_t>(n)));
      xb.row(i) = x.row(row);
      yb(i) = y(row);
    }
    const QrLeastSquares qr(xb);
    if (qr.full_rank()) {
      out.push_back(qr.solve(yb));
    }
  }
  return out;
}

BootstrapCoefficient summarize_column(const std::vector<Eigen::VectorXd>& estimates, Eigen::Index j,
                                      const Coefficient& ols, double level) {
  std::vector<double> values(estimates.size());
  for (std::size_t r = 0; r < estimates.size(); ++r) {
    values[r] = estimates[r](j);
  }
  BootstrapCoefficient out;
  out.name = ols.name;
  out.estimate = ols.estimate;
  out.bootstrap_se = sample_sd(values);
  std::sort(values.begin(), values.end());
  out.ci = {percentile_sorted(values, 0.5 - level / 2.0),
            percentile_sorted(values, 0.5 + level / 2.0), level};
  return out;
}

}  // namespace

const BootstrapCoefficient& PairsBootstrap::coefficient(std::string_view name) const& {
  for (const BootstrapCoefficient& c : coefficients) {
    if (c.name == name) {
      return c;
    }
  }
  throw Error("pairs bootstrap has no coefficient named '" + std::string(name) + "'");
}

PairsBootstrap pairs_bootstrap(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                               const std::vector<std::string>& names,
                               const BootstrapOptions& options) {
  if (options.resamples == 0 || !(options.level > 0.0 && options.level < 1.0)) {
    throw Error("pairs_bootstrap: need resamples >= 1 and level in (0, 1)");
  }
  const OlsFit full = fit_ols(x, y, names, {.level = options.level, .hc3 = false, .vif = false});
  const std::vector<Eigen::VectorXd> estimates = resample_estimates(x, y, options);
  if (estimates.empty()) {
    throw Error("pairs_bootstrap: every resample was rank-deficient");
  }
  PairsBootstrap out;
  out.resamples_used = estimates.size();
  out.resamples_skipped = options.resamples - estimates.size();
  out.seed = options.seed;
  for (std::size_t j = 0; j < full.p; ++j) {
    out.coefficients.push_back(summarize_column(estimates, static_cast<Eigen::Index>(j),
                                                full.coefficients[j], options.level));
  }
  return out;
}

void to_json(nlohmann::json& j, const BootstrapCoefficient& c) {
  j = {{"name", c.name}, {"estimate", c.estimate}, {"bootstrap_se", c.bootstrap_se}, {"ci", c.ci}};
}

void to_json(nlohmann::json& j, const PairsBootstrap& b) {
  j = {{"method", "pairs bootstrap, percentile CI"},
       {"coefficients", b.coefficients},
       {"resamples_used", b.resamples_used},
       {"resamples_skipped", b.resamples_skipped},
       {"seed", b.seed}};
}

}  // namespace kvbench::stats
