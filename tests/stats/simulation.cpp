#include "simulation.h"

#include <cmath>

namespace kvbench::stats::sim {

std::vector<double> blocked_levels(const std::vector<double>& levels, std::size_t blocks,
                                   Rng& rng) {
  std::vector<double> out;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::vector<double> block = levels;
    kvbench::shuffle(block.begin(), block.end(), rng);
    out.insert(out.end(), block.begin(), block.end());
  }
  return out;
}

double saturating_drift(double t_min, double amplitude, double tau_min) {
  return -amplitude * (1.0 - std::exp(-t_min / tau_min));
}

std::vector<Call> interleaved_design(const std::vector<int>& builds,
                                     const std::vector<double>& levels,
                                     std::size_t blocks_per_build, double spacing_min,
                                     double restart_gap_min, Rng& rng) {
  std::vector<double> arm_levels[2];
  std::size_t sessions[2] = {0, 0};
  for (int b = 0; b < 2; ++b) {
    arm_levels[b] = blocked_levels(levels, blocks_per_build, rng);
  }
  for (int build : builds) {
    ++sessions[build];
  }
  std::vector<Call> calls;
  std::size_t next[2] = {0, 0};
  std::size_t seen[2] = {0, 0};
  double t = 0.0;
  for (int build : builds) {
    // Session k of this build takes calls up to round((k+1)·total / sessions).
    const std::size_t k = ++seen[build];
    const std::size_t end = (k * arm_levels[build].size() + sessions[build] / 2) / sessions[build];
    for (; next[build] < end; ++next[build]) {
      calls.push_back({arm_levels[build][next[build]], t, build});
      t += spacing_min;
    }
    t += restart_gap_min;
  }
  return calls;
}

Eigen::MatrixXd design_matrix(const std::vector<Call>& calls, bool with_time, bool with_build,
                              bool with_time_squared) {
  const auto n = static_cast<Eigen::Index>(calls.size());
  const Eigen::Index p =
      2 + (with_time ? 1 : 0) + (with_time_squared ? 1 : 0) + (with_build ? 1 : 0);
  Eigen::MatrixXd x(n, p);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Call& c = calls[static_cast<std::size_t>(i)];
    Eigen::Index j = 0;
    x(i, j++) = 1.0;
    x(i, j++) = c.prompt_k;
    if (with_time) {
      x(i, j++) = c.t_min;
    }
    if (with_time_squared) {
      x(i, j++) = c.t_min * c.t_min;
    }
    if (with_build) {
      x(i, j++) = c.build;
    }
  }
  return x;
}

}  // namespace kvbench::stats::sim
