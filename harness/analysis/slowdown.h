#pragma once
// The headline model of each metric: (shape of the factors) x g(t), drift as a slow-down
// (stats/drift_model.h). The shape is linear in the factors with, for prefill (TTFT and the
// server's prompt time) at three or more prompt lengths, a term in L² (attention reads every
// earlier token: per-token cost grows with position); decode rates get the L² term where an F
// test asks for it. Effects are read at the run's starting speed (g(0) = 1) in the metric's
// units. Spread is judged on pure error: the same g(t) with one mean per condition (the
// saturated model), so a shape that misses is a lack-of-fit finding, not noise.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stats/drift_model.h"
#include "harness/stats/model.h"

namespace kvbench::analysis {

struct HeadlineEffect {
  std::string term;  // prompt_ktokens, num_ctx_k, cache_type=q8_0, variant=B
  std::string what;  // "per 1,000 prompt tokens, average over 64-512 tokens"
  double estimate = 0.0;
  double se = 0.0;
  stats::Interval ci;
};

struct CostAt {
  int prompt_tokens = 0;
  double estimate = 0.0;  // d metric / d(1,000 tokens) at this length
  stats::Interval ci;
};

struct PrefillShape {
  stats::Coefficient linear;               // per 1,000 tokens
  stats::Coefficient quadratic;            // per (1,000 tokens)²
  std::vector<CostAt> marginal;            // at the shortest and the longest prompt
  std::optional<double> crossover_tokens;  // where the L² term equals the linear one (b / c)
};

// The CPU clock read before each call as a covariate beside time: log g gains a term
// c·log(clock / clock at the first call), so c is the metric's elasticity to the clock (-1: a
// time inversely proportional to it; +1 for a rate). The shape and the degree of the time term
// stay the headline's; the effects are read at the first call's speed and clock.
struct ClockCovariate {
  stats::DriftFit fit;  // its last "time" column is log_cpu_clock: not a g(t) to call slow_down on
  stats::Coefficient elasticity;
  std::vector<HeadlineEffect> effects;
  double clock_min_mhz = 0.0;
  double clock_max_mhz = 0.0;
  double bic_time_only = 0.0;  // the headline fit's
  bool preferred = false;      // its BIC is lower than time alone's by 2 or more
};

struct SlowdownModel {
  std::string metric;
  stats::DriftFit fit;
  bool quadratic = false;                      // the shape has prompt_ktokens^2
  std::optional<stats::FTest> quadratic_test;  // L² against the linear shape, same g(t)
  std::vector<double> bics;                    // of each degree of log g tried
  std::vector<HeadlineEffect> effects;
  std::optional<PrefillShape> prefill;
  double t_end_min = 0.0;
  double slow_down_end = 1.0;  // g at the last call
  stats::Interval slow_down_end_ci;
  std::size_t cells = 0;                         // distinct conditions
  std::optional<stats::DriftFit> saturated;      // one mean per condition, the same g(t)
  std::optional<double> pure_error;              // the saturated fit's relative residual SD
  std::optional<double> durbin_watson;           // of the saturated fit (else the shape fit)
  std::optional<double> durbin_watson_smoother;  // the same with one more degree of log g
  std::optional<stats::FTest> lack_of_fit;       // the shape against the saturated model
  std::string note;                              // e.g. why there is no pure error
  std::optional<ClockCovariate> clock;           // where every call has its CPU clock
  std::string clock_note;                        // why a recorded clock gave no covariate
};

// Whether a metric is a prefill time (its shape gets the L² term at 3+ prompt lengths).
bool is_prefill_metric(const std::string& metric);

// Fits the metric's headline model over `rows` (the design of stats/model.h; its time_term and
// time_squared are ignored). `clock_mhz` (empty, or one per row) is the CPU clock of each call,
// offered as a covariate beside time when it moved by more than 1 %. Throws kvbench::Error when
// the model cannot be fitted.
SlowdownModel fit_slowdown(const std::string& metric, const stats::ModelSpec& spec,
                           std::span<const stats::ModelRow> rows,
                           std::span<const double> clock_mhz = {});

void to_json(nlohmann::json& j, const SlowdownModel& m);

}  // namespace kvbench::analysis
