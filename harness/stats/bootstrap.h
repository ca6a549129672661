#pragma once
// Pairs (case) bootstrap of OLS coefficients: resample whole rows with replacement, refit,
// take percentile CIs. A distribution-free cross-check of the t-based CI (results/README.md,
// "Statistics in the report").

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "harness/stats/descriptive.h"

namespace kvbench::stats {

struct BootstrapOptions {
  std::size_t resamples = 2000;
  std::uint64_t seed = 1;
  double level = 0.95;
};

struct BootstrapCoefficient {
  std::string name;
  double estimate = 0.0;      // the OLS estimate on the full data
  double bootstrap_se = 0.0;  // SD of the resampled estimates
  Interval ci;  // type-7 percentiles (1-level)/2 and (1+level)/2 of the resampled estimates
};

struct PairsBootstrap {
  std::vector<BootstrapCoefficient> coefficients;
  std::size_t resamples_used = 0;
  std::size_t resamples_skipped = 0;  // rank-deficient resamples (e.g. a dummy level missing)
  std::uint64_t seed = 0;

  // The named coefficient; throws kvbench::Error if there is none.
  const BootstrapCoefficient& coefficient(std::string_view name) const&;
  const BootstrapCoefficient& coefficient(std::string_view name) const&& = delete;  // would dangle
};

// Pairs bootstrap of every coefficient of y = Xβ + ε: `resamples` resamples of the n rows drawn
// from Rng(seed); rank-deficient resamples are skipped and counted. Same seed, same result.
// Throws kvbench::Error on the preconditions of fit_ols or if no resample could be fitted.
PairsBootstrap pairs_bootstrap(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                               const std::vector<std::string>& names,
                               const BootstrapOptions& options = {});

void to_json(nlohmann::json& j, const BootstrapCoefficient& c);
void to_json(nlohmann::json& j, const PairsBootstrap& b);

}  // namespace kvbench::stats
