#pragma once
// A portable seeded random source: std::mt19937_64's output is fixed by the standard, and the
// bounded draw and shuffle below are our own, so one seed gives one plan on every platform.

#include <cstdint>
#include <random>
#include <vector>

namespace kvbench::plan {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // Uniform integer in [0, bound), bound > 0, by rejection (no modulo bias).
  std::uint64_t below(std::uint64_t bound);
  // Uniform double in [0, 1).
  double unit();
  std::uint64_t next() { return engine_(); }

  // Fisher-Yates shuffle.
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(below(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace kvbench::plan
