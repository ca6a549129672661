// The analysis as summary.json's "analysis" carries it (analysis.h).

#include <fmt/format.h>

#include "harness/analysis/analysis.h"

namespace kvbench::analysis {

using nlohmann::json;

void to_json(json& j, const MetricModel& m) {
  j = {{"metric", m.metric},
       {"numeric", m.numeric},
       {"categorical", m.categorical},
       {"n", m.n},
       {"validity", m.validity},
       {"additive_validity", m.additive_validity},
       {"log_validity", m.log_validity}};
  if (m.slowdown) {
    j["slowdown"] = *m.slowdown;
  }
  if (!m.slowdown_error.empty()) {
    j["slowdown_error"] = m.slowdown_error;
  }
  if (m.fit) {
    j["fit"] = *m.fit;
  }
  if (m.huber) {
    j["huber"] = *m.huber;
  }
  if (m.durbin_watson_t2) {
    j["durbin_watson_t2"] = *m.durbin_watson_t2;
  }
  if (!m.error.empty()) {
    j["error"] = m.error;
  }
}

void to_json(json& j, const ProbeDrift& p) {
  j = {{"metric", p.metric}, {"t_min", p.t_min}, {"values", p.values}};
  if (p.fit) {
    j["theil_sen"] = *p.fit;
  }
  if (p.relative_drift) {
    j["relative_drift"] = *p.relative_drift;
  }
  if (p.relative_drift_ci) {
    j["relative_drift_ci"] = {p.relative_drift_ci->lower, p.relative_drift_ci->upper};
  }
}

void to_json(json& j, const Analysis& a) {
  json conds = json::array();
  for (const auto& c : a.conditions) {
    json ms = json::object();
    for (const auto& [k, s] : c.metrics) {
      ms[k] = s;
    }
    json cj = {{"num_ctx", c.num_ctx},
               {"cache_type", c.cache_type},
               {"prompt_tokens", c.prompt_tokens},
               {"metrics", ms}};
    if (!c.variant.empty()) {
      cj["variant"] = c.variant;
    }
    if (c.batch_size) {
      cj["batch_size"] = *c.batch_size;
    }
    if (c.ubatch_size) {
      cj["ubatch_size"] = *c.ubatch_size;
    }
    conds.push_back(std::move(cj));
  }
  j = {{"conditions", conds},
       {"models", a.models},
       {"probes", a.probes},
       {"timed_ok", a.timed_ok},
       {"timed_failed", a.timed_failed},
       {"effects", a.effects.effects},
       {"effects_withheld", a.effects.withheld},
       {"spikes", a.effects.spikes},
       {"round_levels", a.effects.round_levels}};
  if (a.verdict.present) {
    j["verdict"] = a.verdict;
  }
  if (a.corr_prompt_time) {
    j["corr_prompt_time"] = *a.corr_prompt_time;
  }
}

}  // namespace kvbench::analysis
