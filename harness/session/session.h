#pragma once
// The session value of results/README.md ("CI performance gate") for gating against a stored
// history: the log model's fitted value at a fixed reference point (ŷ at x_ref, t = 0), one per
// gated metric, condition and variant. Pure: records in, values out.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/core/record.h"
#include "harness/scenario/gate_config.h"

namespace kvbench::session {

struct SessionValue {
  std::string metric;
  std::map<std::string, std::string> where;
  std::string variant;        // empty for a run without variants
  double value = 0.0;         // exp(ŷ) in the metric's unit; NaN when `error` is set
  int ref_prompt_tokens = 0;  // x_ref: the lower median of the prompt lengths
  int ref_num_ctx = 0;        // the smallest context size of the calls
  std::size_t n = 0;          // calls in the fit
  std::string error;          // why there is no value
};

// One value per gated metric of `config` (its condition) and variant of the timed calls, at
// prompt length x_ref, the smallest num_ctx, the reference levels of the other factors and t = 0.
// Throws InputError for an unknown metric or factor.
std::vector<SessionValue> session_values(const std::vector<CallRecord>& calls,
                                         const scenario::GateConfig& config,
                                         std::uint64_t seed = 1);

}  // namespace kvbench::session
