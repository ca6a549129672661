#include "harness/core/random.h"

#include <cassert>
#include <limits>

namespace kvbench {

std::size_t Rng::below(std::size_t n) {
  assert(n >= 1);
  const std::uint64_t range = n;
  // Reject the top partial block of 2^64 so every residue is equally likely.
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                              (std::numeric_limits<std::uint64_t>::max() % range + 1) % range;
  std::uint64_t draw = engine_();
  while (draw > limit) {
    draw = engine_();
  }
  return static_cast<std::size_t>(draw % range);
}

double Rng::uniform() {
  // The top 53 bits, scaled by 2^-53.
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

}  // namespace kvbench
