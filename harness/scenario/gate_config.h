#pragma once
// The "gate" section of a scenario: which metrics a performance gate judges, with which margins,
// at which level, and what an undecided gate does (results/README.md, "CI performance gate").

#include <map>
#include <string>
#include <vector>

namespace kvbench::scenario {

// One gated metric, optionally restricted to one condition (e.g. cache_type q8_0 only).
struct GatedMetric {
  std::string metric;   // an analysis metric key: "decode_tps", "ttft_ms", ...
  double margin = 0.0;  // tolerated relative slowdown, 0.05 = 5 %
  // Factor name ("num_ctx", "cache_type", "prompt_tokens") -> level, as text; empty: all calls.
  std::map<std::string, std::string> where;
};

struct GateConfig {
  std::vector<GatedMetric> metrics = {{"decode_tps", 0.05, {}}, {"ttft_ms", 0.10, {}}};
  double alpha = 0.05;  // one-sided level of each test
  int max_sets = 4;     // counterbalanced block sets (ABBA...) at most, extensions included
  bool inconclusive_fails = true;  // false: an undecided gate ends as a warning (exit 0)
  std::string baseline;            // the reference variant; empty: the first in "variants"
  // Read from scenario files that set it and recorded, no longer judged: the call-to-call spread
  // widens the interval over blocks instead of holding a pass back.
  double max_cv = 0.05;
};

}  // namespace kvbench::scenario
