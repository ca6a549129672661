#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/stats/distributions.h"
#include "harness/stats/robust.h"

namespace kvbench::stats {
namespace {

std::vector<double> pairwise_slopes(std::span<const double> x, std::span<const double> y,
                                    std::span<const std::size_t> rows) {
  std::vector<double> slopes;
  slopes.reserve(rows.size() * (rows.size() - 1) / 2);
  for (std::size_t a = 0; a < rows.size(); ++a) {
    for (std::size_t b = a + 1; b < rows.size(); ++b) {
      const std::size_t i = rows[a];
      const std::size_t j = rows[b];
      if (x[i] != x[j]) {
        slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
      }
    }
  }
  return slopes;
}

// The k-th smallest (1-based, fractional k interpolated) of an ascending sample, k clamped.
double order_statistic(const std::vector<double>& sorted, double k) {
  const double clamped = std::clamp(k, 1.0, static_cast<double>(sorted.size()));
  return percentile_sorted(sorted, (clamped - 1.0) / static_cast<double>(sorted.size() - 1));
}

Interval kendall_ci(std::span<const double> y, const std::vector<double>& sorted, double level) {
  const auto n = static_cast<double>(y.size());
  double var_s = n * (n - 1.0) * (2.0 * n + 5.0);
  std::map<double, double> tied;
  for (double v : y) {
    tied[v] += 1.0;
  }
  for (const auto& [value, t] : tied) {
    var_s -= t * (t - 1.0) * (2.0 * t + 5.0);
  }
  var_s /= 18.0;
  const double c = normal_quantile(0.5 + level / 2.0) * std::sqrt(var_s);
  const auto pairs = static_cast<double>(sorted.size());
  if (sorted.size() == 1) {
    return {sorted.front(), sorted.front(), level};
  }
  return {order_statistic(sorted, (pairs - c) / 2.0),
          order_statistic(sorted, (pairs + c) / 2.0 + 1.0), level};
}

Interval bootstrap_ci(std::span<const double> x, std::span<const double> y,
                      const TheilSenOptions& options, std::size_t& used) {
  Rng rng(options.seed);
  std::vector<std::size_t> rows(x.size());
  std::vector<double> slopes;
  for (std::size_t r = 0; r < options.resamples; ++r) {
    for (std::size_t& row : rows) {
      row = rng.below(x.size());
    }
    std::vector<double> s = pairwise_slopes(x, y, rows);
    if (!s.empty()) {
      slopes.push_back(median(s));
    }
  }
  used = slopes.size();
  if (slopes.empty()) {
    throw Error("theil_sen: every bootstrap resample had a single distinct x");
  }
  std::sort(slopes.begin(), slopes.end());
  return {percentile_sorted(slopes, 0.5 - options.level / 2.0),
          percentile_sorted(slopes, 0.5 + options.level / 2.0), options.level};
}

void validate_xy(std::span<const double> x, std::span<const double> y,
                 const TheilSenOptions& options) {
  if (x.size() != y.size()) {
    throw Error("theil_sen: x and y differ in length (" + std::to_string(x.size()) + " vs " +
                std::to_string(y.size()) + ")");
  }
  const auto finite = [](double v) { return std::isfinite(v); };
  if (!std::all_of(x.begin(), x.end(), finite) || !std::all_of(y.begin(), y.end(), finite)) {
    throw Error("theil_sen: x or y holds a non-finite value");
  }
  if (!(options.level > 0.0 && options.level < 1.0)) {
    throw Error("theil_sen: confidence level must be in (0, 1)");
  }
  if (options.ci_method == TheilSenCi::bootstrap && options.resamples == 0) {
    throw Error("theil_sen: bootstrap needs resamples >= 1");
  }
}

}  // namespace

TheilSenFit theil_sen(std::span<const double> x, std::span<const double> y,
                      const TheilSenOptions& options) {
  validate_xy(x, y, options);
  std::vector<std::size_t> all(x.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i] = i;
  }
  std::vector<double> slopes = pairwise_slopes(x, y, all);
  if (slopes.empty()) {
    throw Error("theil_sen: need at least two distinct x values");
  }
  std::sort(slopes.begin(), slopes.end());
  TheilSenFit fit;
  fit.n = x.size();
  fit.pairs = slopes.size();
  fit.slope = percentile_sorted(slopes, 0.5);
  std::vector<double> offsets(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    offsets[i] = y[i] - fit.slope * x[i];
  }
  fit.intercept = median(offsets);
  fit.ci_method = options.ci_method;
  if (options.ci_method == TheilSenCi::kendall) {
    fit.slope_ci = kendall_ci(y, slopes, options.level);
  } else {
    fit.slope_ci = bootstrap_ci(x, y, options, fit.resamples);
    fit.seed = options.seed;
  }
  return fit;
}

double relative_drift(const TheilSenFit& fit, double x_start, double x_end) {
  const double level = fit.intercept + fit.slope * x_start;
  if (level == 0.0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return fit.slope * (x_end - x_start) / level;
}

}  // namespace kvbench::stats

namespace kvbench::stats {

void to_json(nlohmann::json& j, const TheilSenFit& fit) {
  j = {{"method", "Theil-Sen (median of pairwise slopes)"},
       {"n", fit.n},
       {"pairs", fit.pairs},
       {"slope", fit.slope},
       {"intercept", fit.intercept},
       {"slope_ci", fit.slope_ci},
       {"ci_method", fit.ci_method},
       {"resamples", fit.resamples},
       {"seed", fit.seed}};
}

}  // namespace kvbench::stats
