#pragma once
// Precision on demand (scenario "precision"), above the run layer, which it drives, and the
// analysis, which it asks: after the planned calls, one more set of blocks at
// a time (every server configuration once more, its rounds shuffled afresh, the earlier sets
// untouched) until the CI of the named effect is narrower than the target or the call budget
// would be passed. run.json's "precision" says which, with each check made.
//
// The CI is the effect's at the level of its units (analysis.effects: clustered by round, or
// judged on blocks for a factor that needs a restart), so a set adds rounds to a prompt slope
// and blocks to a cache type or num_ctx, and bursts of a slow machine widen it instead of
// passing for precision. Where the effect has several forms (a slope per server setting, a
// level's effect per prompt length), the widest binds. Stopping on the CI's width, not on the
// estimate, keeps the CI's coverage close to its level: checked by simulation in
// tests/analysis/precision_stop_test.cpp.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario.h"
#include "harness/stats/descriptive.h"

namespace kvbench::precision {

struct PrecisionCheck {
  std::optional<double> estimate;
  std::optional<stats::Interval> ci;
  std::optional<double> half_width;  // (upper - lower) / 2 / |estimate|
  std::string why;                   // why there is none
};

// The named effect at the level of its units, and how wide its CI is (the widest form's).
PrecisionCheck check_precision(const results::LoadedRun& run, const scenario::Precision& p);

// Runs more sets into `summary.run_dir` until the scenario's precision is reached or its budget
// would be passed; returns the summary of the last part run. Without precision, `summary` as
// given.
run::RunSummary until_precise(const scenario::Scenario& s, run::RunSummary summary,
                              const run::RunOptions& options, run::RunContext& ctx);

// run::run_scenario_once, resume_run_once and extend_run_once, each continued until precise.
run::RunSummary run_scenario(const scenario::Scenario& s, const run::RunOptions& options,
                             run::RunContext& ctx);
run::RunSummary resume_run(const std::filesystem::path& run_dir, const run::RunOptions& options,
                           run::RunContext& ctx);
run::RunSummary extend_run(const std::filesystem::path& run_dir, int extra_sets,
                           const run::RunOptions& options, run::RunContext& ctx);

}  // namespace kvbench::precision
