#pragma once
// Simulated benchmark runs for the Monte Carlo tests: blocked, shuffled prompt lengths, a
// saturating thermal drift d(t) = -A·(1 - exp(-t/τ)) and Gaussian noise.

#include <cstddef>
#include <vector>

#include <Eigen/Dense>

#include "harness/core/random.h"

namespace kvbench::stats::sim {

struct Call {
  double prompt_k = 0.0;  // prompt tokens / 1000
  double t_min = 0.0;     // minutes since the first timed call
  int build = 0;          // 0 = baseline, 1 = candidate
};

// `blocks` blocks, each holding every level once in shuffled order (blocked randomization).
std::vector<double> blocked_levels(const std::vector<double>& levels, std::size_t blocks, Rng& rng);

// Saturating drift -amplitude·(1 - exp(-t/tau)).
double saturating_drift(double t_min, double amplitude, double tau_min);

// Interleaved sessions (server restarts) in the order of `builds` (0 or 1). Each build's N calls
// are `blocks_per_build` blocked-shuffled blocks of `levels`, dealt in order over its S sessions:
// its k-th session (1-based) ends at call round(k·N/S). Calls are `spacing_min` apart, with a
// `restart_gap_min` pause between sessions.
std::vector<Call> interleaved_design(const std::vector<int>& builds,
                                     const std::vector<double>& levels,
                                     std::size_t blocks_per_build, double spacing_min,
                                     double restart_gap_min, Rng& rng);

// X = [1, prompt_k, t_min, t_min², build]: t_min when with_time, t_min² when with_time_squared,
// build when with_build; one row per call.
Eigen::MatrixXd design_matrix(const std::vector<Call>& calls, bool with_time, bool with_build,
                              bool with_time_squared = false);

}  // namespace kvbench::stats::sim
