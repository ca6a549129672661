#pragma once
// What the two halves of the effects (effects.cpp: within rounds; block_effects.cpp: over server
// blocks) share.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/analysis/analysis.h"
#include "harness/analysis/effects.h"
#include "harness/core/record.h"
#include "harness/stats/group_t.h"
#include "harness/stats/unit_fit.h"

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

// One server setting's slope per 1,000 prompt tokens on both scales, fitted with one level per
// round of its blocks and clustered by round, or by server start where it has kMinBlocksPerLevel
// of them; its spikes found on the log scale.
struct CellSlope {
  std::string cell;
  std::vector<std::size_t> spikes;       // rows of the run's rows
  std::optional<stats::UnitFit> fit[2];  // linear, log
  std::optional<stats::UnitFit> state;   // log, with the state's column where there is one
  std::vector<double> levels;            // the rounds' levels in run order
  std::vector<int> blocks;               // each level's block
  bool by_block = false;                 // clustered by server start, not by round
  std::size_t starts = 0;                // the setting's server starts (blocks)
  std::optional<stats::GroupT> im[2];    // the cross-check over groups of rounds, both scales
  // Log scale: each length's level and, last, the previous call's length (carry-over).
  std::optional<stats::UnitFit> carry_over;
  std::string error;
};

// The slope of the rows `in_cell` of `rows` (one server setting, named `cell`).
CellSlope cell_slope(const std::vector<EffectRow>& rows, const std::vector<std::size_t>& in_cell,
                     std::string cell);

// The restart-level factors judged on blocks: block means regressed on every varying factor's
// levels, t with blocks - coefficients degrees of freedom; a factor with fewer than
// kMinBlocksPerLevel blocks at a level gets no interval. Where a level's slope differs
// (`interacting`), its effect is given at each prompt length instead of averaged over them.
void block_effects(const Metric& m, const std::vector<EffectRow>& rows,
                   const std::vector<std::size_t>& spikes,
                   const std::vector<RestartFactor>& factors,
                   const std::set<std::string>& interacting, Effects& out);

// One server setting's rounds' levels (log scale, run order, each block's mean removed) with
// their blocks, their lag-1 correlation, the slope's dependence on them from the fit on the log
// scale, the first lasting change of the machine's speed (TTFT only), and the carry-over from the
// previous call's length (the last coefficient of `carry_over_fit`).
RoundLevels round_levels(const Metric& m, std::string cell, const std::vector<double>& levels,
                         const std::vector<int>& blocks,
                         const std::optional<stats::UnitFit>& log_fit,
                         const std::optional<stats::UnitFit>& carry_over_fit);

}  // namespace kvbench::analysis
