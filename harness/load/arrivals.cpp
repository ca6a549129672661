#include "harness/load/arrivals.h"

#include <cmath>

#include "harness/core/random.h"

namespace kvbench::load {

std::vector<double> poisson_arrivals_s(std::uint64_t seed, int n, double rate_per_s) {
  Rng rng(seed);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(n > 0 ? n : 0));
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += -std::log1p(-rng.uniform()) / rate_per_s;  // uniform() < 1, so the log is finite
    out.push_back(t);
  }
  return out;
}

}  // namespace kvbench::load
