#include "harness/analysis/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "harness/core/cache_level.h"
#include "harness/core/error.h"

namespace kvbench::analysis {

using nlohmann::json;

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> kMetrics = {
      {"ttft_ms", "TTFT", "ms", stats::Better::lower,
       [](const CallRecord& r) { return r.client.ttft_ms; }},
      {"server_prompt_ms", "server prompt time", "ms", stats::Better::lower,
       [](const CallRecord& r) { return r.server.prompt_ms; }},
      {"decode_tps", "decode rate", "tok/s", stats::Better::higher,
       [](const CallRecord& r) { return r.client.decode_tps; }},
      {"server_decode_tps", "server decode rate", "tok/s", stats::Better::higher,
       [](const CallRecord& r) { return r.server.decode_tps; }},
  };
  return kMetrics;
}

const Metric* metric_named(std::string_view key) {
  for (const auto& m : metrics()) {
    if (m.key == key) {
      return &m;
    }
  }
  return nullptr;
}

Measured measured(const std::vector<CallRecord>& calls) {
  Measured out;
  for (const auto& c : calls) {
    (c.by_workload() ? out.by_design : out.singles).push_back(c);
  }
  return out;
}

bool fresh_read(const CallRecord& r) {
  return (r.kind == CallKind::timed || r.kind == CallKind::probe) &&
         r.pair_role != PairRole::edited && !r.by_workload();
}

bool fresh_timed(const CallRecord& r) {
  return r.kind == CallKind::timed && fresh_read(r);
}

bool single_timed(const CallRecord& r) {
  return r.kind == CallKind::timed && !r.pair_id && !r.by_workload();
}

double elapsed_minutes(const CallRecord& r, double first_start_s) {
  return (r.t_start_s - first_start_s) / 60.0;
}

namespace {

std::vector<ConditionStats> describe_conditions(const std::vector<const CallRecord*>& timed,
                                                std::uint64_t seed) {
  using Key =
      std::tuple<std::string, int, std::string, std::optional<int>, std::optional<int>, int>;
  std::map<Key, std::vector<const CallRecord*>> groups;
  for (const auto* r : timed) {
    groups[{r->variant, r->num_ctx, r->cache_type, r->batch_size, r->ubatch_size, r->prompt_tokens}]
        .push_back(r);
  }
  std::vector<ConditionStats> out;
  for (const auto& [key, rs] : groups) {
    ConditionStats c;
    std::tie(c.variant, c.num_ctx, c.cache_type, c.batch_size, c.ubatch_size, c.prompt_tokens) =
        key;
    for (const auto& m : metrics()) {
      std::vector<double> v;
      for (const auto* r : rs) {
        if (auto x = m.value(*r)) {
          v.push_back(*x);
        }
      }
      if (v.empty()) {
        continue;
      }
      stats::SummaryOptions o;
      o.seed = seed;
      o.better = m.better;
      c.metrics.emplace_back(m.key, stats::summarize(v, o));
    }
    out.push_back(std::move(c));
  }
  return out;
}

template <typename F>
std::size_t distinct(const std::vector<const CallRecord*>& rs, F&& key) {
  std::set<decltype(key(*rs.front()))> s;
  for (const auto* r : rs) {
    s.insert(key(*r));
  }
  return s.size();
}

struct Design {
  stats::ModelSpec spec;
  std::vector<stats::ModelRow> rows;
  std::vector<double> clock_mhz;  // one per row where every call read the CPU clock; else empty
};

using BatchMember = std::optional<int> CallRecord::*;

// A batch size's level in a model: its value, "" where the server's own.
std::string batch_level(const CallRecord& r, BatchMember m) {
  return (r.*m) ? std::to_string(*(r.*m)) : "";
}

// The batch sizes that vary by block (factors.batch_size, ubatch_size): categorical terms, each
// against its smallest level; the members the rows read them from.
std::vector<BatchMember> add_batch_terms(stats::ModelSpec& spec,
                                         const std::vector<const CallRecord*>& timed) {
  std::vector<BatchMember> out;
  for (const auto& [name, member] : {std::pair{"batch_size", &CallRecord::batch_size},
                                     std::pair{"ubatch_size", &CallRecord::ubatch_size}}) {
    std::set<std::optional<int>> levels;
    for (const auto* r : timed) {
      levels.insert(r->*member);
    }
    if (levels.size() > 1) {
      const auto smallest = *levels.begin();  // absent (the server's own) first
      spec.categorical.push_back({name, smallest ? std::to_string(*smallest) : ""});
      out.push_back(member);
    }
  }
  return out;
}

Design design_for(const Metric& m, const std::vector<const CallRecord*>& timed, double t0,
                  const std::string& reference_variant) {
  Design d;
  const bool vary_variant = distinct(timed, [](const CallRecord& r) { return r.variant; }) > 1;
  const bool vary_prompt = distinct(timed, [](const CallRecord& r) { return r.prompt_tokens; }) > 1;
  const bool vary_ctx = distinct(timed, [](const CallRecord& r) { return r.num_ctx; }) > 1;
  const bool split = std::any_of(timed.begin(), timed.end(), [](const CallRecord* r) {
    return cache_halves(r->cache_type).split();
  });
  // Both halves as one factor (cache_type=q8_0), or K and V apart where a pair differs.
  const bool vary_kv =
      !split && distinct(timed, [](const CallRecord& r) { return r.cache_type; }) > 1;
  const bool vary_k = split && distinct(timed, [](const CallRecord& r) {
                                 return cache_halves(r.cache_type).k;
                               }) > 1;
  const bool vary_v = split && distinct(timed, [](const CallRecord& r) {
                                 return cache_halves(r.cache_type).v;
                               }) > 1;
  if (vary_prompt) {
    d.spec.numeric.emplace_back("prompt_ktokens");
  }
  if (vary_ctx) {
    d.spec.numeric.emplace_back("num_ctx_k");
  }
  if (vary_variant) {
    d.spec.categorical.push_back({"variant", reference_variant});
  }
  if (vary_kv) {
    d.spec.categorical.push_back({"cache_type", "f16"});
  }
  if (vary_k) {
    d.spec.categorical.push_back({"cache_type_k", "f16"});
  }
  if (vary_v) {
    d.spec.categorical.push_back({"cache_type_v", "f16"});
  }
  const auto batches = add_batch_terms(d.spec, timed);
  std::vector<std::optional<double>> clock;
  for (const auto* r : timed) {
    const auto v = m.value(*r);
    if (!v) {
      continue;
    }
    stats::ModelRow row;
    if (vary_prompt) {
      row.numeric.push_back(r->prompt_tokens / 1000.0);
    }
    if (vary_ctx) {
      row.numeric.push_back(r->num_ctx / 1000.0);
    }
    if (vary_variant) {
      row.categorical.push_back(r->variant);
    }
    if (vary_kv) {
      row.categorical.push_back(r->cache_type);
    }
    if (vary_k) {
      row.categorical.push_back(cache_halves(r->cache_type).k);
    }
    if (vary_v) {
      row.categorical.push_back(cache_halves(r->cache_type).v);
    }
    for (const auto member : batches) {
      row.categorical.push_back(batch_level(*r, member));
    }
    row.elapsed_min = elapsed_minutes(*r, t0);
    row.value = *v;
    d.rows.push_back(std::move(row));
    clock.push_back(r->cpu_mhz);
  }
  if (std::all_of(clock.begin(), clock.end(), [](const auto& c) { return c.has_value(); })) {
    for (const auto& c : clock) {
      d.clock_mhz.push_back(*c);
    }
  }
  return d;
}

std::vector<stats::ValidityReason> log_validity(const Design& d, const stats::ModelFit& fit,
                                                const stats::ValidityInputs& shared,
                                                std::size_t n) {
  stats::ValidityInputs in = shared;
  in.durbin_watson = fit.log.durbin_watson;
  if (*in.durbin_watson < 1.0) {
    stats::ModelSpec t2 = d.spec;
    t2.time_squared = true;
    in.durbin_watson_t2 = stats::fit_model(t2, d.rows).log.durbin_watson;
  }
  in.cv_resid = fit.log.residual_se;  // log-scale residual SD: the relative spread
  in.valid_calls = n;
  return stats::validity_reasons(in);
}

MetricModel fit_metric(const Metric& m, const std::vector<const CallRecord*>& timed, double t0,
                       const stats::ValidityInputs& shared, const std::string& reference_variant) {
  MetricModel out;
  out.metric = m.key;
  Design d = design_for(m, timed, t0, reference_variant);
  out.numeric = d.spec.numeric;
  for (const auto& c : d.spec.categorical) {
    out.categorical.push_back(c.name);
  }
  out.n = d.rows.size();
  const std::size_t params = 2 + d.spec.numeric.size() + d.spec.categorical.size();
  if (out.n < params + 2) {
    out.error = fmt::format("{} calls are too few for a model with {} terms", out.n, params);
    return out;
  }
  try {
    out.fit = stats::fit_model(d.spec, d.rows);
    auto design = stats::build_design(d.spec, d.rows, false);
    out.huber = stats::fit_huber(design.x, design.y, design.names);
    stats::ValidityInputs in = shared;
    in.durbin_watson = out.fit->linear.durbin_watson;
    if (*in.durbin_watson < 1.0) {
      stats::ModelSpec t2 = d.spec;
      t2.time_squared = true;
      out.durbin_watson_t2 = stats::fit_model(t2, d.rows).linear.durbin_watson;
      in.durbin_watson_t2 = out.durbin_watson_t2;
    }
    in.cv_resid = out.fit->linear.cv_resid;
    in.valid_calls = out.n;
    out.additive_validity = stats::validity_reasons(in);
    out.validity = out.additive_validity;
    out.log_validity = log_validity(d, *out.fit, shared, out.n);
  } catch (const Error& e) {
    out.fit.reset();
    out.huber.reset();
    out.error = e.what();
  }
  try {
    out.slowdown = fit_slowdown(m.key, d.spec, d.rows, d.clock_mhz);
    stats::ValidityInputs in = shared;
    in.durbin_watson = out.slowdown->durbin_watson;
    in.durbin_watson_t2 = out.slowdown->durbin_watson_smoother;
    in.pure_error = out.slowdown->pure_error ? out.slowdown->pure_error
                                             : out.slowdown->fit.relative_residual_sd;
    in.valid_calls = out.n;
    out.validity = stats::validity_reasons(in);
  } catch (const Error& e) {
    out.slowdown.reset();
    out.slowdown_error = e.what();
  }
  return out;
}

ProbeDrift probe_drift(const Metric& m, const std::vector<const CallRecord*>& probes, double t0) {
  ProbeDrift p;
  p.metric = m.key;
  for (const auto* r : probes) {
    if (auto v = m.value(*r)) {
      p.t_min.push_back(elapsed_minutes(*r, t0));
      p.values.push_back(*v);
    }
  }
  if (p.values.size() >= 3) {
    p.fit = stats::theil_sen(p.t_min, p.values);
    p.relative_drift = stats::relative_drift(*p.fit, p.t_min.front(), p.t_min.back());
    const double level = p.fit->intercept + p.fit->slope * p.t_min.front();
    const double span = p.t_min.back() - p.t_min.front();
    if (level > 0.0 && std::isfinite(p.fit->slope_ci.lower) &&
        std::isfinite(p.fit->slope_ci.upper)) {
      // From the slope's CI at the fitted starting level (the level's own uncertainty left out);
      // no metric falls by more than all of it.
      p.relative_drift_ci = stats::Interval{std::max(-1.0, p.fit->slope_ci.lower * span / level),
                                            p.fit->slope_ci.upper * span / level};
    }
  }
  return p;
}

}  // namespace

Analysis analyze(const std::vector<CallRecord>& calls, std::uint64_t seed,
                 const std::string& reference_variant, const StartFacts& starts) {
  Analysis a;
  std::vector<const CallRecord*> timed;
  std::vector<const CallRecord*> probes;
  double t0 = std::numeric_limits<double>::infinity();
  for (const auto& r : calls) {
    if (!fresh_read(r)) {
      continue;
    }
    t0 = std::min(t0, r.t_start_s);
    if (!r.ok()) {
      if (r.kind == CallKind::timed) {
        ++a.timed_failed;
      }
      continue;
    }
    (r.kind == CallKind::timed ? timed : probes).push_back(&r);
  }
  a.timed_ok = timed.size();
  if (timed.empty()) {
    return a;
  }
  a.conditions = describe_conditions(timed, seed);
  const auto* first = *std::min_element(
      timed.begin(), timed.end(),
      [](const CallRecord* x, const CallRecord* y) { return x->t_start_s < y->t_start_s; });
  const std::string reference = reference_variant.empty() ? first->variant : reference_variant;
  stats::ValidityInputs shared;
  shared.failed_calls = a.timed_failed;
  if (distinct(timed, [](const CallRecord& r) { return r.prompt_tokens; }) > 1) {
    std::vector<double> x;
    std::vector<double> t;
    for (const auto* r : timed) {
      x.push_back(r->prompt_tokens);
      t.push_back(elapsed_minutes(*r, t0));
    }
    a.corr_prompt_time = stats::pearson_correlation(x, t);
    shared.corr_x_t = a.corr_prompt_time;
  }
  for (const auto& m : metrics()) {
    ProbeDrift p = probe_drift(m, probes, t0);
    stats::ValidityInputs in = shared;
    in.probe_drift = p.relative_drift;
    if (p.relative_drift_ci) {
      in.probe_drift_lower = p.relative_drift_ci->lower;
      in.probe_drift_upper = p.relative_drift_ci->upper;
    }
    a.models.push_back(fit_metric(m, timed, t0, in, reference));
    if (!p.values.empty()) {
      a.probes.push_back(std::move(p));
    }
  }
  std::vector<stats::ValidityReason> checks;
  for (const auto& m : a.models) {
    checks.insert(checks.end(), m.validity.begin(), m.validity.end());
  }
  a.effects = estimate_effects(timed, reference, starts);
  a.verdict = judge_effects(a.effects, checks);
  return a;
}

}  // namespace kvbench::analysis
