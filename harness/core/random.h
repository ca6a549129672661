#pragma once
// The one seeded random source of kvbench (plans, arrivals, bootstraps, simulations), whose draws
// are the same on every platform: the engine is std::mt19937_64 (its sequence is fixed by the
// C++ standard) and the integer and uniform draws and the shuffle are computed here rather than
// by the library-specific std::*_distribution classes and std::shuffle, so one seed gives one
// plan everywhere.

#include <cstddef>
#include <cstdint>
#include <random>

namespace kvbench {

class Rng {
 public:
  using result_type = std::uint64_t;

  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // A uniform integer in [0, n), without modulo bias. n must be >= 1.
  std::size_t below(std::size_t n);
  // A uniform double in [0, 1) with 53 random bits.
  double uniform();

  // UniformRandomBitGenerator interface, so std::shuffle and Boost.Random can use an Rng.
  static constexpr result_type min() { return std::mt19937_64::min(); }
  static constexpr result_type max() { return std::mt19937_64::max(); }
  result_type operator()() { return engine_(); }

 private:
  std::mt19937_64 engine_;
};

// Fisher–Yates shuffle driven by Rng::below, so the permutation is the same on every platform.
template <typename It>
void shuffle(It first, It last, Rng& rng) {
  const auto n = static_cast<std::size_t>(last - first);
  for (std::size_t i = n; i > 1; --i) {
    const std::size_t j = rng.below(i);
    using std::swap;
    swap(first[static_cast<std::ptrdiff_t>(i - 1)], first[static_cast<std::ptrdiff_t>(j)]);
  }
}

}  // namespace kvbench
