#include "harness/plan/rng.h"

#include <limits>

namespace kvbench::plan {

std::uint64_t Rng::below(std::uint64_t bound) {
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % bound;
  std::uint64_t x = engine_();
  while (x >= limit) {
    x = engine_();
  }
  return x % bound;
}

double Rng::unit() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

}  // namespace kvbench::plan
