#pragma once
// Simulated call records of an interleaved variant run, for the gate tests: counterbalanced
// blocks (A B B A per set; A B C C B A with three variants), one warm-up call per block, then
// `repeats` rounds of every prompt length in shuffled order, with a saturating drift, a small
// per-block offset (the server restart), an optional per-set offset (the machine's state while
// the set runs) and log-normal noise per call.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/core/record.h"

namespace kvbench::gate::sim {

struct RunShape {
  std::vector<std::string> variants{"base", "cand"};
  std::vector<int> prompt_tokens{256, 1024, 2048};
  int repeats = 5;  // rounds per block (the scenario default)
  int sets = 1;
  int num_ctx = 4096;
  std::string cache_type = "f16";
  double decode_cv = 0.04;  // per-call noise, as a fraction
  double ttft_cv = 0.07;
  double block_cv = 0.01;       // per-block offset of both metrics
  double set_cv = 0.0;          // per-set offset of both: the machine's state of those minutes
  double drift = 0.05;          // decode falls, TTFT rises, up to this fraction (saturating)
  double drift_tau_min = 5.0;   // time constant of the drift
  double call_spacing_s = 4.0;  // between calls
  double restart_gap_s = 10.0;  // between blocks
  std::map<std::string, double> decode_ratio;  // variant -> decode rate / baseline
  std::map<std::string, double> ttft_ratio;    // variant -> TTFT / baseline
};

// The records of a run of `shape.sets` sets; `seed` fixes every draw.
std::vector<CallRecord> simulate_run(const RunShape& shape, std::uint64_t seed);

// One more set appended to `calls` (same run, later in time), as an extension would add it.
void extend_simulated_run(std::vector<CallRecord>& calls, const RunShape& shape,
                          std::uint64_t seed);

}  // namespace kvbench::gate::sim
