#pragma once
// Where the capacity limit lies, with its uncertainty: the TTFT p90 of every measured level
// (replicates pooled) fitted as a non-decreasing curve of concurrency (isotonic regression, pool
// adjacent violators, weighted by calls), the concurrency at which that curve reaches the limit
// (linear between measured levels), a bootstrap CI of it (calls resampled within each level),
// and whether the limit is reached by a smooth rise or a cliff. Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stats/descriptive.h"

namespace kvbench::load {

struct LevelSamples {
  int level = 0;
  std::vector<double> ttft_ms;  // of every ok timed call, over every measurement of the level
};

// A cliff: the fitted p90 at least doubles over the step of concurrency where it crosses the
// limit. Otherwise a smooth rise.
inline constexpr double kCliffRatio = 2.0;

struct CapacityBoundary {
  std::vector<int> levels;          // measured, ascending
  std::vector<double> p90_ms;       // observed, per level
  std::vector<double> monotone_ms;  // the isotonic fit, per level
  // The concurrency where the fitted p90 reaches the limit; absent when no measured level
  // reaches it (above the range) or the lowest already does (below it).
  std::optional<double> boundary;
  std::string position;  // "within", "above the measured levels", "below the measured levels"
  std::optional<stats::Interval> ci;  // bootstrap percentile CI, censored at the measured range
  std::string shape;                  // "cliff" or "smooth rise" ("" without a crossing)
  std::optional<double> jump;         // fitted p90 ratio over the crossing step
  int resamples = 0;
};

// Pool-adjacent-violators fit of `y` (weights `w`), non-decreasing in the given order.
std::vector<double> isotonic_fit(const std::vector<double>& y, const std::vector<double>& w);

// Needs at least one level with a TTFT; levels without any are left out.
CapacityBoundary estimate_boundary(const std::vector<LevelSamples>& levels, double limit_ms,
                                   std::uint64_t seed, int resamples = 2000, double level = 0.95);

void to_json(nlohmann::json& j, const CapacityBoundary& b);

}  // namespace kvbench::load
