#pragma once
// Precision on demand (scenario "precision"): after the planned calls, one more set of blocks at
// a time (every server configuration once more, its rounds shuffled afresh, the earlier sets
// untouched) until the CI of the named headline effect is narrower than the target or the call
// budget would be passed. run.json's "precision" says which, with each check made.
//
// Stopping on the CI's width, not on the estimate, keeps the CI's coverage close to its level:
// checked by simulation in tests/stats/drift_model_test.cpp.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario.h"
#include "harness/stats/descriptive.h"

namespace kvbench::run {

struct PrecisionCheck {
  std::optional<double> estimate;
  std::optional<stats::Interval> ci;
  std::optional<double> half_width;  // (upper - lower) / 2 / |estimate|
  std::string why;                   // why there is none
};

// The named effect of a run's headline model, and how wide its CI is.
PrecisionCheck check_precision(const results::LoadedRun& run, const scenario::Precision& p);

// Runs more sets into `summary.run_dir` until the scenario's precision is reached or its budget
// would be passed; returns the summary of the last part run. Without precision, `summary` as
// given.
RunSummary until_precise(const scenario::Scenario& s, RunSummary summary, const RunOptions& options,
                         RunContext& ctx);

}  // namespace kvbench::run
