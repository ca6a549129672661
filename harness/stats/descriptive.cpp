#include "harness/stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "harness/core/error.h"
#include "harness/core/random.h"

namespace kvbench::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void require_non_empty(std::span<const double> values, const char* what) {
  if (values.empty()) {
    throw Error(std::string(what) + ": the sample is empty");
  }
}

std::vector<double> sorted_copy(std::span<const double> values) {
  std::vector<double> out(values.begin(), values.end());
  std::sort(out.begin(), out.end());
  return out;
}

TukeyClass tukey_class(double x, const Summary& s) {
  if (x < s.lower_outer_fence || x > s.upper_outer_fence) {
    return TukeyClass::severe;
  }
  if (x < s.lower_inner_fence || x > s.upper_inner_fence) {
    return TukeyClass::mild;
  }
  return TukeyClass::none;
}

void flag_outliers(std::span<const double> values, double limit, Summary& s) {
  s.lower_inner_fence = s.q1 - 1.5 * s.iqr;
  s.upper_inner_fence = s.q3 + 1.5 * s.iqr;
  s.lower_outer_fence = s.q1 - 3.0 * s.iqr;
  s.upper_outer_fence = s.q3 + 3.0 * s.iqr;
  for (std::size_t i = 0; i < values.size(); ++i) {
    OutlierFlag flag;
    flag.index = i;
    flag.value = values[i];
    flag.tukey = tukey_class(values[i], s);
    flag.modified_z = s.mad > 0.0 ? (values[i] - s.median) / s.mad : kNaN;
    flag.modified_z_flag = std::abs(flag.modified_z) > limit;  // false for NaN
    if (flag.tukey != TukeyClass::none || flag.modified_z_flag) {
      s.outliers.push_back(flag);
    }
  }
}

void flag_slow_first(std::span<const double> values, const SummaryOptions& options, Summary& s) {
  s.slow_first_factor = options.slow_first_factor;
  s.first_to_rest_ratio = kNaN;
  s.slow_first = false;
  if (values.size() < 3) {
    return;
  }
  const double rest = median(values.subspan(1));
  if (!(rest > 0.0)) {
    return;
  }
  s.first_to_rest_ratio = values[0] / rest;
  s.slow_first = options.better == Better::lower
                     ? s.first_to_rest_ratio > options.slow_first_factor
                     : s.first_to_rest_ratio < 1.0 / options.slow_first_factor;
}

}  // namespace

double mean(std::span<const double> values) {
  require_non_empty(values, "mean");
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double sample_sd(std::span<const double> values) {
  const double m = mean(values);
  if (values.size() < 2) {
    return kNaN;
  }
  double ss = 0.0;
  for (double v : values) {
    ss += (v - m) * (v - m);
  }
  return std::sqrt(ss / static_cast<double>(values.size() - 1));
}

double percentile_sorted(std::span<const double> sorted, double p) {
  require_non_empty(sorted, "percentile");
  if (!(p >= 0.0 && p <= 1.0)) {
    throw Error("percentile: p must be in [0, 1], got " + std::to_string(p));
  }
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double percentile(std::span<const double> values, double p) {
  require_non_empty(values, "percentile");
  const std::vector<double> sorted = sorted_copy(values);
  return percentile_sorted(sorted, p);
}

double median(std::span<const double> values) {
  return percentile(values, 0.5);
}

double mad_raw(std::span<const double> values) {
  const double m = median(values);
  std::vector<double> dev(values.size());
  std::transform(values.begin(), values.end(), dev.begin(),
                 [m](double v) { return std::abs(v - m); });
  return median(dev);
}

double pearson_correlation(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) {
    throw Error("pearson_correlation: samples differ in length (" + std::to_string(x.size()) +
                " vs " + std::to_string(y.size()) + ")");
  }
  if (x.size() < 2) {
    return kNaN;
  }
  const double mx = mean(x);
  const double my = mean(y);
  double sxy = 0.0;
  double sxx = 0.0;
  double syy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0.0 || syy == 0.0) {
    return kNaN;
  }
  return sxy / std::sqrt(sxx * syy);
}

Interval bootstrap_median_ci(std::span<const double> values, std::size_t resamples, double level,
                             std::uint64_t seed) {
  require_non_empty(values, "bootstrap_median_ci");
  if (resamples == 0 || !(level > 0.0 && level < 1.0)) {
    throw Error("bootstrap_median_ci: need resamples >= 1 and level in (0, 1)");
  }
  Rng rng(seed);
  std::vector<double> draw(values.size());
  std::vector<double> medians(resamples);
  for (double& m : medians) {
    for (double& d : draw) {
      d = values[rng.below(values.size())];
    }
    const auto mid = draw.begin() + static_cast<std::ptrdiff_t>(draw.size() / 2);
    std::nth_element(draw.begin(), mid, draw.end());
    m = *mid;
    if (draw.size() % 2 == 0) {  // mean of the middle pair: the largest of the lower half
      m = 0.5 * (m + *std::max_element(draw.begin(), mid));
    }
  }
  std::sort(medians.begin(), medians.end());
  return {percentile_sorted(medians, (1.0 - level) / 2.0),
          percentile_sorted(medians, (1.0 + level) / 2.0), level};
}

Summary summarize(std::span<const double> values, const SummaryOptions& options) {
  require_non_empty(values, "summarize");
  if (!std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); })) {
    throw Error("summarize: the sample holds a non-finite value");
  }
  const std::vector<double> sorted = sorted_copy(values);
  Summary s;
  s.n = values.size();
  s.mean = mean(values);
  s.sd = sample_sd(values);
  s.cv = s.mean != 0.0 ? s.sd / s.mean : kNaN;
  s.median = percentile_sorted(sorted, 0.5);
  s.mad_raw = mad_raw(values);
  s.mad = kMadScale * s.mad_raw;
  s.min = sorted.front();
  s.max = sorted.back();
  s.p05 = percentile_sorted(sorted, 0.05);
  s.q1 = percentile_sorted(sorted, 0.25);
  s.q3 = percentile_sorted(sorted, 0.75);
  s.p95 = percentile_sorted(sorted, 0.95);
  s.iqr = s.q3 - s.q1;
  s.bootstrap_resamples = options.bootstrap_resamples;
  s.seed = options.seed;
  s.median_ci =
      bootstrap_median_ci(values, options.bootstrap_resamples, options.level, options.seed);
  flag_outliers(values, options.modified_z_limit, s);
  flag_slow_first(values, options, s);
  return s;
}

void to_json(nlohmann::json& j, const Interval& interval) {
  j = {{"lower", interval.lower}, {"upper", interval.upper}, {"level", interval.level}};
}

void to_json(nlohmann::json& j, const OutlierFlag& flag) {
  j = {{"index", flag.index},
       {"value", flag.value},
       {"tukey", flag.tukey},
       {"modified_z", flag.modified_z},
       {"modified_z_flag", flag.modified_z_flag}};
}

void to_json(nlohmann::json& j, const Summary& s) {
  j = {{"n", s.n},
       {"mean", s.mean},
       {"sd", s.sd},
       {"cv", s.cv},
       {"median", s.median},
       {"mad", s.mad},
       {"mad_raw", s.mad_raw},
       {"min", s.min},
       {"max", s.max},
       {"p05", s.p05},
       {"q1", s.q1},
       {"q3", s.q3},
       {"p95", s.p95},
       {"iqr", s.iqr},
       {"percentile_definition", "type 7 (linear interpolation between order statistics)"},
       {"median_ci", s.median_ci},
       {"median_ci_method", "percentile bootstrap"},
       {"bootstrap_resamples", s.bootstrap_resamples},
       {"seed", s.seed},
       {"fences",
        {{"lower_inner", s.lower_inner_fence},
         {"upper_inner", s.upper_inner_fence},
         {"lower_outer", s.lower_outer_fence},
         {"upper_outer", s.upper_outer_fence}}},
       {"outliers", s.outliers},
       {"first_to_rest_ratio", s.first_to_rest_ratio},
       {"slow_first", s.slow_first},
       {"slow_first_factor", s.slow_first_factor}};
}

}  // namespace kvbench::stats
