#pragma once
// The capacity search: the largest concurrency whose TTFT p90 stays under a limit, found by
// doubling (1, 2, 4, ... up to a maximum) and then bisecting between the last level that passed
// and the first that failed. Pure: the measuring is a function the caller passes in.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kvbench::load {

// What measuring one level gave: its TTFT p90 over the timed calls (nullopt: no call gave a
// TTFT) and how many of its calls did not end ok (refused, failed, timed out).
struct LevelMeasurement {
  std::optional<double> ttft_p90_ms;
  int not_ok = 0;
  std::vector<double> ttft_ms;  // of every ok timed call: what the boundary's CI resamples
};

// One probed level, in probing order.
struct CapacityProbe {
  int level = 0;
  LevelMeasurement measured;
  bool passed = false;  // p90 present, below the limit, and every call ok
};

struct CapacityResult {
  int answer = 0;                   // the largest passing level found; 0: level 1 failed already
  bool at_max = false;              // the answer is the maximum: the limit may hold further up
  std::optional<int> first_failed;  // the smallest level probed that failed
  std::vector<CapacityProbe> probes;
};

// Whether a measurement passes: a TTFT p90 strictly below `limit_ms` and no call that failed.
bool level_passes(const LevelMeasurement& m, double limit_ms);

// Probes 1, 2, 4, ... (the last step capped at `max_level`) until a level fails or max_level
// passes, then bisects between the last pass and the first failure. Every level is measured at
// most once. The answer passed when probed, and answer + 1 failed unless the answer is
// max_level; a level above a failure is never probed, so with noise the answer is the boundary
// found, not a global maximum. Throws std::invalid_argument when max_level < 1.
CapacityResult search_capacity(int max_level, double limit_ms,
                               const std::function<LevelMeasurement(int level)>& measure);

// "passed: p90 812.4 ms < 2000 ms", "failed: 2 calls not ok", "failed: no TTFT" ...
std::string describe_probe(const CapacityProbe& probe, double limit_ms);

}  // namespace kvbench::load
