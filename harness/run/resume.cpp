// Going on with a run in its own folder. A resume sends the calls it has not recorded (and a
// prefix-reuse pair cut between its reads whole). An
// extension adds counterbalanced block sets (of server variants, or for precision): the scenario
// in run.json gets a larger block_repeats, its plan grows by whole sets (the earlier blocks stay
// as they were), and the new calls run through the resume.

#include <set>

#include <fmt/format.h>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/plan/plan.h"
#include "harness/results/results.h"
#include "harness/run/run_folder.h"
#include "harness/run/runner.h"

namespace kvbench::run {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Throws InputError unless every block of `before` is, byte for byte, the same block of `after`.
void check_prefix(const fs::path& run_dir, const json& before, const json& after) {
  const json& old_blocks = before.value("blocks", json::array());
  const json& new_blocks = after.at("blocks");
  bool prefix = old_blocks.size() <= new_blocks.size();
  for (std::size_t i = 0; prefix && i < old_blocks.size(); ++i) {
    prefix = old_blocks[i].dump() == new_blocks[i].dump();
  }
  if (!prefix) {
    throw InputError(fmt::format(
        "{}: the plan in run.json is not the start of the extended plan of its scenario (a run "
        "of another kvbench version?): this run cannot be extended",
        run_dir.string()));
  }
}

}  // namespace

RunSummary extend_run_once(const fs::path& run_dir, int extra_sets, const RunOptions& options,
                           RunContext& ctx) {
  if (extra_sets < 1 || extra_sets > 100) {
    throw InputError(fmt::format("extend: {} sets: expected 1 to 100", extra_sets));
  }
  results::LoadedRun loaded = results::load_run(run_dir);
  results::RunManifest run = loaded.run;
  if (run.scenario.empty() || run.plan.is_null()) {
    throw InputError(fmt::format("{}: run.json has no scenario or plan", run_dir.string()));
  }
  auto s = scenario::parse_scenario(run.scenario.dump(), (run_dir / "run.json").string());
  if (s.variants.empty() && !s.precision.active()) {
    throw InputError(fmt::format(
        "{}: the run compares no server variants and asks for no precision: only a run with "
        "\"variants\" or \"precision\" can be extended by more block sets",
        run_dir.string()));
  }
  const int sets_before = s.block_repeats;
  if (sets_before + extra_sets > 100) {
    throw InputError(fmt::format("{}: {} sets and {} more exceed block_repeats' limit of 100",
                                 run_dir.string(), sets_before, extra_sets));
  }
  s.block_repeats += extra_sets;
  s.resolved = scenario::to_json(s);
  const json plan = plan::to_json(plan::make_plan(s));
  check_prefix(run_dir, run.plan, plan);
  run.extended.push_back({utc_now_rfc3339(), extra_sets, sets_before,
                          run.plan.value("blocks", json::array()).size(), loaded.calls.size()});
  run.scenario = s.resolved;
  run.plan = plan;
  run.status = "incomplete";
  results::save_manifest(run_dir, run);
  return resume_run_once(run_dir, options, ctx);
}

RunSummary resume_run_once(const fs::path& run_dir, const RunOptions& options, RunContext& ctx) {
  ResumeState state;
  state.run_dir = run_dir;
  const results::LoadedRun loaded = results::load_run(run_dir);
  state.run = loaded.run;
  std::set<int> edited_of;  // the cold reads whose edited read was recorded
  for (const auto& r : loaded.calls) {
    if (r.outcome != Outcome::aborted) {  // an interrupted call is repeated
      state.done.insert(r.seq);
      if (r.pair_role == PairRole::edited && r.pair_id) {
        edited_of.insert(*r.pair_id);
      }
    }
    state.recorded.push_back(r);
  }
  // A pair cut between its reads is sent again whole: the restarted server no longer holds the
  // cold read its edited read resends.
  for (const auto& r : loaded.calls) {
    if (r.pair_role == PairRole::cold && edited_of.count(r.seq) == 0) {
      state.done.erase(r.seq);
    }
  }
  if (state.run.scenario.empty()) {
    throw InputError(fmt::format("{}: run.json has no scenario", run_dir.string()));
  }
  const auto s = with_overrides(
      scenario::parse_scenario(state.run.scenario.dump(), (run_dir / "run.json").string()),
      options);
  return run_plan(s, options, ctx, std::move(state));
}

}  // namespace kvbench::run
