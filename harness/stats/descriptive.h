#pragma once
// Descriptive statistics of one sample: location, spread, percentiles, a bootstrap CI of the
// median, outlier flags (flagged, never dropped) and a slow-first-value flag.
//
// Percentiles use Hyndman & Fan (1996) type 7, the default of R and NumPy: with the sample
// sorted ascending as x[0..n-1] and h = (n-1)·p, the p-percentile is
// x[floor(h)] + (h - floor(h))·(x[floor(h)+1] - x[floor(h)]).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::stats {

// Scale that makes the MAD a consistent estimator of the SD for normal data (1/Φ⁻¹(0.75)).
inline constexpr double kMadScale = 1.4826;

// Arithmetic mean. Throws kvbench::Error on empty input.
double mean(std::span<const double> values);
// Sample standard deviation (divisor n-1). NaN for n = 1; throws kvbench::Error on empty input.
double sample_sd(std::span<const double> values);
// Type-7 p-percentile of an ascending, non-empty sample; p in [0, 1].
double percentile_sorted(std::span<const double> sorted, double p);
// Type-7 p-percentile of any non-empty sample (copies and sorts). Throws on empty input.
double percentile(std::span<const double> values, double p);
// Median (type-7 percentile 0.5: the mean of the middle pair for even n). Throws on empty input.
double median(std::span<const double> values);
// Raw median absolute deviation, median(|x - median(x)|), unscaled. Throws on empty input.
double mad_raw(std::span<const double> values);
// Pearson correlation of two equal-length samples; NaN if either has zero variance or n < 2.
// Throws kvbench::Error on a length mismatch.
double pearson_correlation(std::span<const double> x, std::span<const double> y);

// Which direction of a metric is good: lower for times, higher for rates.
enum class Better { lower, higher };
NLOHMANN_JSON_SERIALIZE_ENUM(Better, {{Better::lower, "lower"}, {Better::higher, "higher"}})

// A confidence interval with its two-sided level (0.95 for a 95 % CI).
struct Interval {
  double lower = 0.0;
  double upper = 0.0;
  double level = 0.95;
};

// Percentile-method bootstrap CI of the median: `resamples` resamples of size n with
// replacement drawn from Rng(seed); the CI is the type-7 (1-level)/2 and (1+level)/2 percentiles
// of the resampled medians. Same seed, same interval. Throws kvbench::Error on empty input or
// resamples == 0.
Interval bootstrap_median_ci(std::span<const double> values, std::size_t resamples, double level,
                             std::uint64_t seed);

struct SummaryOptions {
  double level = 0.95;  // of the median CI
  std::size_t bootstrap_resamples = 2000;
  std::uint64_t seed = 1;          // of the median bootstrap
  double modified_z_limit = 10.0;  // flag |x - median| / (1.4826·MAD) above this
  double slow_first_factor = 1.5;  // see Summary::slow_first
  Better better = Better::lower;   // which way "slow" lies for the first value
};

// Tukey's fences: inner = quartile ∓ 1.5·IQR ("mild"), outer = quartile ∓ 3·IQR ("severe").
enum class TukeyClass { none, mild, severe };
NLOHMANN_JSON_SERIALIZE_ENUM(TukeyClass, {{TukeyClass::none, "none"},
                                          {TukeyClass::mild, "mild"},
                                          {TukeyClass::severe, "severe"}})

// One flagged value. Both rules are reported; a value appears if either rule flags it.
struct OutlierFlag {
  std::size_t index = 0;  // position in the input, 0-based
  double value = 0.0;
  TukeyClass tukey = TukeyClass::none;
  double modified_z = 0.0;  // (x - median) / (1.4826·MAD); NaN when MAD = 0
  bool modified_z_flag = false;
};

struct Summary {
  std::size_t n = 0;
  double mean = 0.0;
  double sd = 0.0;  // n-1 divisor; NaN for n = 1
  double cv = 0.0;  // sd / mean; NaN for n = 1 or mean = 0
  double median = 0.0;
  double mad = 0.0;  // 1.4826 · mad_raw
  double mad_raw = 0.0;
  double min = 0.0;
  double max = 0.0;
  double p05 = 0.0;
  double q1 = 0.0;
  double q3 = 0.0;
  double p95 = 0.0;
  double iqr = 0.0;
  Interval median_ci;
  std::size_t bootstrap_resamples = 0;
  std::uint64_t seed = 0;
  double lower_inner_fence = 0.0;
  double upper_inner_fence = 0.0;
  double lower_outer_fence = 0.0;
  double upper_outer_fence = 0.0;
  std::vector<OutlierFlag> outliers;
  // ratio = first value / median of the others (needs n >= 3 and a positive median, else NaN).
  // slow_first: ratio > factor for Better::lower, ratio < 1/factor for Better::higher.
  double first_to_rest_ratio = 0.0;
  bool slow_first = false;
  double slow_first_factor = 0.0;
};

// All of the above for one sample, in input order (the first value is values[0]).
// Throws kvbench::Error on empty input or non-finite values.
Summary summarize(std::span<const double> values, const SummaryOptions& options = {});

void to_json(nlohmann::json& j, const Interval& interval);
void to_json(nlohmann::json& j, const OutlierFlag& flag);
void to_json(nlohmann::json& j, const Summary& summary);

}  // namespace kvbench::stats
