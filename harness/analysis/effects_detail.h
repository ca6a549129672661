#pragma once
// What the two halves of the effects (effects.cpp: within rounds; block_effects.cpp: over server
// blocks) share.

#include <set>
#include <string>
#include <vector>

#include "harness/analysis/analysis.h"
#include "harness/analysis/effects.h"
#include "harness/core/record.h"

namespace kvbench::analysis {

// The factors that need a server restart, in the order cells are named.
struct RestartFactor {
  std::string name;
  std::string (*level)(const CallRecord&);
  std::string reference;
};

// A timed call with the metric's value.
struct EffectRow {
  const CallRecord* call;
  double value;
};

// An effect from an estimate on the log scale: 100 (e^b - 1) per cent, the interval's ends
// transformed, the SE by the delta method.
Effect relative_effect(Effect e);
// The t interval of e.estimate ± t(df) e.se at `level`.
Effect with_t_interval(Effect e, double level = 0.95);

// The restart-level factors judged on blocks: block means regressed on every varying factor's
// levels, t with blocks - coefficients degrees of freedom; a factor with fewer than
// kMinBlocksPerLevel blocks at a level gets no interval. Where a level's slope differs
// (`interacting`), its effect is given at each prompt length instead of averaged over them.
void block_effects(const Metric& m, const std::vector<EffectRow>& rows,
                   const std::vector<std::size_t>& spikes,
                   const std::vector<RestartFactor>& factors,
                   const std::set<std::string>& interacting, Effects& out);

}  // namespace kvbench::analysis
