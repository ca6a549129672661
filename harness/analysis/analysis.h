#pragma once
// From call records to numbers with uncertainty (results/README.md, "Statistics in the report"):
// descriptive statistics per condition and metric, the drift-aware regression of each metric on the
// factors and elapsed time, drift probes with a Theil-Sen slope, and the validity rules. Pure:
// records in, results out; the report renders them.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/effects.h"
#include "harness/analysis/effects_verdict.h"
#include "harness/analysis/slowdown.h"
#include "harness/core/record.h"
#include "harness/stats/descriptive.h"
#include "harness/stats/model.h"
#include "harness/stats/robust.h"
#include "harness/stats/validity.h"

namespace kvbench::analysis {

struct Metric {
  std::string key;    // "ttft_ms", ...
  std::string label;  // "TTFT"
  std::string unit;   // "ms"
  stats::Better better;
  std::function<std::optional<double>(const CallRecord&)> value;
};

// A run's calls sorted by what they measure, the one sorting every analysis (report, gate,
// precision, commands) rests on: single prompts (timed calls, warm-ups, drift probes and the reads
// of prefix-reuse pairs) and the calls that reuse by design (conversation turns, a trace's
// replayed requests), each in the order given. Those are reported by their workload and stay out
// of the models, conditions and checks of single prompts, whoever asks.
struct Measured {
  std::vector<CallRecord> singles;
  std::vector<CallRecord> by_design;
};
Measured measured(const std::vector<CallRecord>& calls);

// The calls every summary and model of a run rests on: timed calls and drift probes that read a
// fresh prompt, outside conversations. A prefix-reuse pair's edited resend reads most of its prompt
// from the cache: it is measured against its cold read (report/prefix.h) and kept out of the
// models, where it would pool cache hits with cold reads of the same length.
bool fresh_read(const CallRecord& r);
// A fresh read that is a timed call, not a drift probe: the calls of the condition table.
bool fresh_timed(const CallRecord& r);
// A timed call outside any prefix-reuse pair and conversation: the calls the repeated-prompt trap
// looks at.
bool single_timed(const CallRecord& r);

// Client TTFT, server prompt time, client and server decode rate.
const std::vector<Metric>& metrics();
// The metric of metrics() with this key; nullptr when there is none.
const Metric* metric_named(std::string_view key);

// Elapsed minutes of each call since the first timed (or probe) call of the run.
double elapsed_minutes(const CallRecord& r, double first_start_s);

struct ConditionStats {
  std::string variant;  // empty unless the run compares server variants
  int num_ctx = 0;
  std::string cache_type;
  std::optional<int> batch_size;  // where the scenario sets the server's batch sizes
  std::optional<int> ubatch_size;
  int prompt_tokens = 0;
  std::vector<std::pair<std::string, stats::Summary>> metrics;  // metric key -> summary
};

struct MetricModel {
  std::string metric;
  std::vector<std::string> numeric;      // predictors besides time: "prompt_ktokens", "num_ctx_k"
  std::vector<std::string> categorical;  // "variant", "cache_type" when they vary
  std::size_t n = 0;
  // The headline model: shape x g(t), effects at the run's starting speed (slowdown.h).
  std::optional<SlowdownModel> slowdown;
  std::string slowdown_error;              // why there is none
  std::optional<stats::ModelFit> fit;      // additive time term, linear and log: for comparison
  std::optional<stats::HuberFit> huber;    // the linear model refitted robustly
  std::optional<double> durbin_watson_t2;  // refit with a t² term, when DW < 1
  // The validity rules on the headline model: spread by pure error, serial correlation of the
  // saturated model's residuals, probes, calls. Without a headline model, on the linear fit.
  std::vector<stats::ValidityReason> validity;
  // The same rules on the additive linear model (residual CV, its Durbin-Watson): for comparison.
  std::vector<stats::ValidityReason> additive_validity;
  // The same rules judged on the log model (Durbin-Watson of its residuals; its residual SD as
  // the CV): what a relative effect such as the gate's rests on. A large multiplicative effect
  // (one variant 9x faster) inflates the linear model's residual CV, not the log model's.
  std::vector<stats::ValidityReason> log_validity;
  std::string error;  // why there is no fit
};

struct ProbeDrift {
  std::string metric;
  std::vector<double> t_min;
  std::vector<double> values;
  std::optional<stats::TheilSenFit> fit;  // needs 3 probes or more
  std::optional<double> relative_drift;   // over the run, as a fraction of the level at start
  // The same from the slope's CI alone, at the fitted starting level; never below -100 %.
  std::optional<stats::Interval> relative_drift_ci;
};

struct Analysis {
  std::vector<ConditionStats> conditions;
  std::vector<MetricModel> models;
  std::vector<ProbeDrift> probes;
  std::optional<double> corr_prompt_time;  // correlation of prompt length with elapsed time
  std::size_t timed_ok = 0;
  std::size_t timed_failed = 0;
  // The headline effects at the level of their independent units (effects.h), and how far to
  // trust them (effects_verdict.h).
  Effects effects;
  EffectsVerdict verdict;
};

// Analyses the timed calls (and probes) of a run; `seed` drives every bootstrap. When the calls
// come from more than one server variant, "variant" is a categorical term of every model, coded
// against `reference_variant` (empty: the variant of the first timed call), so the coefficient
// "variant=<name>" of the log model is that variant's relative effect against the reference.
// `starts` says what the run knows of its server starts beyond its calls (effects.h).
Analysis analyze(const std::vector<CallRecord>& calls, std::uint64_t seed = 1,
                 const std::string& reference_variant = "", const StartFacts& starts = {});

void to_json(nlohmann::json& j, const MetricModel& m);
void to_json(nlohmann::json& j, const ProbeDrift& p);
void to_json(nlohmann::json& j, const Analysis& a);

}  // namespace kvbench::analysis
