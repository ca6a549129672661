#pragma once
// The run's headline effects with intervals at the level of their independent units
// (results/README.md, "What an interval covers"): what changes within a shuffled round (prompt
// length, and its slope under each server setting) is fitted with one level per round of a block
// and clustered by round (by block where a setting ran in four blocks or more: a server start may
// set its own slope); what needs a server restart (cache type, num_ctx, variant) is judged on
// blocks, with no interval below four blocks per level. Each effect comes in the run's units
// (about this run: it scales with the machine's speed) and in a relative form that travels
// between runs and machines. Spikes are kept out of these fits by a stated rule (stats/unit_fit.h)
// and counted.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/results/start_tau.h"
#include "harness/stats/descriptive.h"

namespace kvbench::analysis {

// One entry of summary.json's analysis.effects. `term` names what changed: "prompt_ktokens"
// (per 1,000 prompt tokens), "prompt_ktokens@cache_type=q8_0" (that level's own slope),
// "cache_type=q8_0:prompt_ktokens" (its slope minus the reference level's), "cache_type=q8_0"
// (the level against the reference, over the blocks), "cache_type=q8_0@prompt_tokens=1024" (the
// same at one prompt length, where the slopes differ).
struct Effect {
  std::string metric;
  std::string term;
  double estimate = 0;
  double se = 0;
  stats::Interval ci;
  double df = 0;             // of the t used
  std::size_t clusters = 0;  // independent units: rounds of blocks, or blocks
  std::string cluster_unit;  // "round" or "block"
  std::string unit;          // "ms per 1,000 prompt tokens", "% per 1,000 prompt tokens", "%"
  bool relative = false;     // the form that travels between runs and machines
  std::optional<double> se_inflation;  // clustered SE / per-call SE of the same fit
  // A slope's cross-check: the t interval over 6-8 groups of consecutive rounds, each fitted on
  // its own (Ibragimov-Mueller, stats/group_t.h), in the effect's units; nullopt elsewhere.
  std::optional<stats::Interval> im_ci;
  std::size_t im_groups = 0;
  // What the interval covers: "machine" (it rests on kMinBlocksPerLevel server starts or more
  // per setting, or includes a start-to-start component measured before) or "this_start" (the
  // rounds of too few starts, which share each start's own speed and slope; an attached server
  // is one start).
  std::string covers;
  double starts = 0;  // server starts per setting the effect rests on (the fewest of its settings)
  // The start-to-start component added to the interval (run.json's start_tau), in the effect's
  // units, scaled to this run's starts; nullopt where none was.
  std::optional<results::StartTau> start_tau;
};

// An effect the run cannot give an honest interval for, and what would.
struct WithheldEffect {
  std::string metric;
  std::string term;
  std::string reason;
  int blocks_needed = 0;  // per level, where blocks are missing
};

// The calls kept out of the effects' fits of one metric as spikes (stats::SpikeRule).
struct Spikes {
  std::string metric;
  std::size_t calls = 0;      // in the fit before the rule
  std::vector<int> seq;       // the spikes' call numbers
  std::vector<double> ratio;  // each spike against its fit (2.7: 2.7x its fitted value)
};

// The machine's state as one server setting's rounds saw it: each round's level on the log scale
// (mean log value less the slope's share, its block's mean removed), in run order.
struct RoundLevels {
  std::string metric;
  std::string cell;  // the server setting; empty when none varies
  std::vector<double> levels;
  std::vector<int> blocks;     // each level's block (server start)
  std::optional<double> lag1;  // correlation of consecutive rounds' levels (3 rounds or more)
  // From 8 rounds on: how the slope's log changes per unit of the round's log level (the slow
  // state costing more, or less, per prompt token), with its interval.
  std::optional<double> state_slope;
  std::optional<stats::Interval> state_slope_ci;
  // A change of TTFT's level that came once and stayed, inside one block (stats::find_step over
  // its rounds, a shift of at least 50 %): the first block where one is found.
  struct Step {
    int block = 0;
    std::size_t round = 0;  // the after segment's first round, counted from 0 within the block
    double relative = 0;    // 100 (e^shift - 1) %
    double p = 1;           // Bonferroni-adjusted over the splits tried
  };
  std::optional<Step> step;
  // How much the metric of a call changes (per cent) per 1,000 prompt tokens of the call before it
  // in its block (among the calls of this fit: a failed call between them is skipped), each
  // length at its own level: what one call leaves behind for the next.
  struct CarryOver {
    double relative = 0;
    stats::Interval ci;
    double p = 1;  // two-sided, t(df) of the fit's units
  };
  std::optional<CarryOver> carry_over;
};

struct Effects {
  std::vector<Effect> effects;
  std::vector<WithheldEffect> withheld;
  std::vector<Spikes> spikes;
  std::vector<RoundLevels> round_levels;
};

// The blocks per level below which a restart-level factor gets no interval.
inline constexpr int kMinBlocksPerLevel = 4;

// What a run knows of its server starts beyond its calls.
struct StartFacts {
  bool one_start = false;  // an attached server: every block shares one start
  // Start-to-start components measured before on this machine class, server build and model.
  std::vector<results::StartTau> taus;
};

// The effects of every metric of metrics() on `timed` (fresh timed calls that succeeded).
// `reference_variant` is the variant the others are compared with.
Effects estimate_effects(const std::vector<const CallRecord*>& timed,
                         const std::string& reference_variant, const StartFacts& starts = {});

// Sets each effect's `covers`; where `starts.taus` holds a run-to-run component for an effect,
// adds it (its variance scaled by the starts per setting it was measured over against this
// effect's), with Satterthwaite's degrees of freedom, and the effect covers the machine: on too
// few starts it lacks the start-to-start part, and on any number of starts a run of seconds lacks
// what the machine's state does over minutes.
void cover_starts(std::vector<Effect>& effects, const StartFacts& starts);

void to_json(nlohmann::json& j, const Effect& e);
void to_json(nlohmann::json& j, const WithheldEffect& w);
void to_json(nlohmann::json& j, const Spikes& s);
void to_json(nlohmann::json& j, const RoundLevels& r);

}  // namespace kvbench::analysis
