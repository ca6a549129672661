#include "harness/precision/precision.h"

#include <cmath>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/core/clock.h"
#include "harness/plan/plan.h"
#include "harness/process/signals.h"

namespace kvbench::precision {

using run::RunContext;
using run::RunOptions;
using run::RunSummary;

using nlohmann::json;

namespace {

// Calls one more set adds: the plan's calls per set.
std::size_t calls_per_set(const scenario::Scenario& s) {
  const auto plan = plan::make_plan(s);
  return plan.call_count() / static_cast<std::size_t>(std::max(1, s.block_repeats));
}

void record(const std::filesystem::path& run_dir, const results::PrecisionStatus& status) {
  results::update_manifest(run_dir, [&](results::RunManifest& run) {
    auto& p = run.precision;
    if (!p) {
      p.emplace();
    }
    p->last = status;
    p->checks.push_back(status);
  });
}

// Whether an effect's term (analysis::Effect::term) is a form of the scenario's precision effect:
// prompt_ktokens, or one setting's slope (prompt_ktokens@cache_type=q8_0); num_ctx_k, a num_ctx
// level's effect (num_ctx=4096, or at one prompt length); cache_type=<type>, its effect in either
// form. Interactions (a difference of slopes) are not the effect.
bool names(const std::string& term, const std::string& effect) {
  if (term.find(':') != std::string::npos) {
    return false;
  }
  if (effect == "num_ctx_k") {
    return term.starts_with("num_ctx=");
  }
  return term == effect || term.starts_with(effect + "@");
}

}  // namespace

PrecisionCheck check_precision(const results::LoadedRun& run, const scenario::Precision& p) {
  PrecisionCheck out;
  const auto a = analysis::analyze(analysis::measured(run.calls).singles, run.run.seed());
  // The widest of the effect's forms binds: every server setting's slope, every prompt length's
  // level effect where the level interacts with it.
  for (const auto& e : a.effects.effects) {
    if (e.metric != p.metric || e.relative || !names(e.term, p.effect) || e.estimate == 0) {
      continue;
    }
    const double half = (e.ci.upper - e.ci.lower) / 2 / std::abs(e.estimate);
    if (!out.half_width || half > *out.half_width) {
      out.estimate = e.estimate;
      out.ci = e.ci;
      out.half_width = half;
    }
  }
  if (out.half_width) {
    return out;
  }
  for (const auto& w : a.effects.withheld) {
    if (w.metric == p.metric && names(w.term, p.effect)) {
      out.why = w.reason;
      return out;
    }
  }
  out.why = fmt::format("no interval for {} of {} at the level of its units", p.effect, p.metric);
  return out;
}

RunSummary until_precise(const scenario::Scenario& s, RunSummary summary, const RunOptions& options,
                         RunContext& ctx) {
  const scenario::Precision& p = s.precision;
  if (!p.active()) {
    return summary;
  }
  const std::size_t per_set = calls_per_set(s);
  while (true) {
    const auto loaded = results::load_run(summary.run_dir);
    const auto check = check_precision(loaded, p);
    const auto sets = loaded.run.scenario.value("block_repeats", 1);
    const std::size_t calls = loaded.calls.size();
    results::PrecisionStatus status;
    status.metric = p.metric;
    status.effect = p.effect;
    status.target_half_width = p.half_width;
    status.max_calls = p.max_calls;
    status.sets = sets;
    status.calls = calls;
    status.at = utc_now_rfc3339();
    if (check.estimate && check.ci) {
      status.estimate = *check.estimate;
      status.ci = std::array<double, 2>{check.ci->lower, check.ci->upper};
    }
    status.half_width = check.half_width;
    if (!check.why.empty()) {
      status.why = check.why;
    }
    std::string outcome;
    if (check.half_width && *check.half_width <= p.half_width) {
      outcome = "reached";
    } else if (process::stop_requested() || !summary.complete) {
      outcome = "interrupted";
    } else if (calls + per_set > static_cast<std::size_t>(p.max_calls)) {
      outcome = "budget spent";
    } else if (sets >= 100) {
      outcome = "set limit (100) reached";
    }
    status.status = outcome.empty() ? "continuing" : outcome;
    record(summary.run_dir, status);
    if (!outcome.empty()) {
      return summary;
    }
    summary = run::extend_run_once(summary.run_dir, 1, options, ctx);
  }
}

RunSummary run_scenario(const scenario::Scenario& s, const RunOptions& options, RunContext& ctx) {
  return until_precise(s, run::run_scenario_once(s, options, ctx), options, ctx);
}

namespace {

RunSummary continued(const std::filesystem::path& run_dir, RunSummary summary,
                     const RunOptions& options, RunContext& ctx) {
  const auto run = results::load_run(run_dir).run;
  const auto s = scenario::parse_scenario(run.scenario.dump(), (run_dir / "run.json").string());
  return until_precise(s, std::move(summary), options, ctx);
}

}  // namespace

RunSummary resume_run(const std::filesystem::path& run_dir, const RunOptions& options,
                      RunContext& ctx) {
  return continued(run_dir, run::resume_run_once(run_dir, options, ctx), options, ctx);
}

RunSummary extend_run(const std::filesystem::path& run_dir, int extra_sets,
                      const RunOptions& options, RunContext& ctx) {
  return continued(run_dir, run::extend_run_once(run_dir, extra_sets, options, ctx), options, ctx);
}

}  // namespace kvbench::precision
