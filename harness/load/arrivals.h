#pragma once
// Open-loop load: when each call arrives. Pure and seeded, so a plan's arrivals are reproducible.

#include <cstdint>
#include <vector>

namespace kvbench::load {

// `n` arrival times of a Poisson process of `rate_per_s` (> 0), in seconds after the start,
// ascending; the first arrives after one exponential gap. Same seed, same times.
std::vector<double> poisson_arrivals_s(std::uint64_t seed, int n, double rate_per_s);

}  // namespace kvbench::load
