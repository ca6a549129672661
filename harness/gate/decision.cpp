#include "harness/gate/decision.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/analysis/analysis.h"
#include "harness/core/error.h"

namespace kvbench::gate {

namespace {

const analysis::Metric& find_metric(const std::string& key, const std::string& field) {
  std::vector<std::string> keys;
  for (const auto& m : analysis::metrics()) {
    if (m.key == key) {
      return m;
    }
    keys.push_back(m.key);
  }
  throw InputError(fmt::format("{}: unknown metric '{}': expected one of {}", field, key,
                               fmt::join(keys, ", ")));
}

const stats::Coefficient* find_coefficient(const stats::OlsFit& fit, const std::string& name) {
  for (const auto& c : fit.coefficients) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

// The variant is judged across blocks, whose spread holds the machine's noise and drift: only
// the rules that speak to trust (failed or too few calls, a failed shuffle, throttling) hold a
// pass back.
void keep_trust_rules(GateEntry& e) {
  std::erase_if(e.validity,
                [](const stats::ValidityReason& v) { return !analysis::speaks_to_trust(v.rule); });
}

// Fills the entry's fit numbers; returns the gate input, or nothing with entry.reason set.
std::optional<stats::GateMetric> gate_input(GateEntry& e, const analysis::MetricModel& model,
                                            const analysis::Metric& metric,
                                            const std::vector<CallRecord>& subset,
                                            const std::string& baseline, int unit_blocks) {
  const stats::Better better = metric.better;
  e.n = model.n;
  e.validity = model.log_validity;  // the gate judges the log model
  if (!model.fit) {
    e.reason = model.error.empty() ? "the model could not be fitted" : model.error;
    return std::nullopt;
  }
  const auto* c = find_coefficient(model.fit->log, "variant=" + e.candidate);
  if (c == nullptr) {
    e.reason = fmt::format(
        "no variant term: the calls of this condition do not hold both '{}' "
        "and the baseline with a {}",
        e.candidate, e.metric);
    return std::nullopt;
  }
  if (!(c->se > 0.0) || !(model.fit->log.df > 0.0) || !std::isfinite(c->estimate)) {
    e.reason = "the variant effect has no finite standard error";
    return std::nullopt;
  }
  // The fit's rows: the timed calls that succeeded and carry the metric, in record order.
  std::vector<const CallRecord*> rows;
  for (const auto& r : subset) {
    if (r.kind == CallKind::timed && r.ok() && metric.value(r)) {
      rows.push_back(&r);
    }
  }
  std::map<std::string, double> effects;
  for (const auto& k : model.fit->log.coefficients) {
    if (k.name.rfind("variant=", 0) == 0) {
      effects[k.name.substr(8)] = k.estimate;
    }
  }
  e.se_calls = c->se;
  e.block = block_effect(rows, model.fit->log, effects, baseline, e.candidate, unit_blocks);
  keep_trust_rules(e);
  if (!e.block) {
    e.reason = "too few blocks (server starts) per variant to judge the variant across blocks";
    return std::nullopt;
  }
  const double se = std::max(c->se, e.block->se);
  return stats::GateMetric{e.metric, better, c->estimate, se, e.block->df, e.margin};
}

void apply_validity(GateEntry& e) {
  if (e.validity.empty() || e.verdict != stats::Verdict::pass) {
    return;
  }
  std::vector<std::string> rules;
  for (const auto& v : e.validity) {
    rules.push_back(v.message);
  }
  e.verdict = stats::Verdict::inconclusive;
  e.reason = fmt::format("would pass, but the calls cannot carry it: {}", fmt::join(rules, "; "));
}

}  // namespace

RunGate plan_gate(const std::vector<CallRecord>& calls, const scenario::GateConfig& config,
                  const std::vector<std::string>& declared) {
  RunGate g;
  g.alpha = config.alpha;
  g.variants = declared;
  if (g.variants.empty()) {
    for (const auto& r : calls) {
      if (r.kind == CallKind::timed &&
          std::find(g.variants.begin(), g.variants.end(), r.variant) == g.variants.end()) {
        g.variants.push_back(r.variant);
      }
    }
  }
  if (g.variants.size() < 2) {
    throw InputError(
        "variants: the gate compares server variants: the run needs at least two, it has " +
        std::to_string(g.variants.size()));
  }
  g.baseline = config.baseline.empty() ? g.variants.front() : config.baseline;
  if (std::find(g.variants.begin(), g.variants.end(), g.baseline) == g.variants.end()) {
    throw InputError(fmt::format("gate.baseline: '{}' is none of the variants ({})", g.baseline,
                                 fmt::join(g.variants, ", ")));
  }
  if (config.metrics.empty()) {
    throw InputError("gate.metrics: no metric to gate");
  }
  return g;
}

RunGate gate_run(const std::vector<CallRecord>& calls, const scenario::GateConfig& config,
                 const std::vector<std::string>& declared, std::uint64_t seed) {
  RunGate g = plan_gate(calls, config, declared);
  std::vector<stats::GateMetric> inputs;
  std::vector<std::size_t> with_numbers;
  std::map<std::string, analysis::Analysis> analyses;  // by condition: each analysed once
  for (std::size_t i = 0; i < config.metrics.size(); ++i) {
    const auto& gm = config.metrics[i];
    const auto field = fmt::format("gate.metrics[{}]", i);
    const std::string metric_field = field + ".metric";
    const auto& metric = find_metric(gm.metric, metric_field);
    std::vector<CallRecord> subset;
    for (const auto& r : calls) {
      if (matches(r, gm.where, field + ".where")) {
        subset.push_back(r);
      }
    }
    const auto label = condition_label(gm.where);
    if (analyses.find(label) == analyses.end()) {
      analyses.emplace(label, analysis::analyze(subset, seed, g.baseline));
    }
    const auto& a = analyses.at(label);
    const auto model = std::find_if(a.models.begin(), a.models.end(),
                                    [&](const auto& m) { return m.metric == gm.metric; });
    for (const auto& v : g.variants) {
      if (v == g.baseline) {
        continue;
      }
      GateEntry e;
      e.metric = gm.metric;
      e.where = gm.where;
      e.candidate = v;
      e.margin = gm.margin;
      auto in = model == a.models.end() ? std::optional<stats::GateMetric>{}
                                        : gate_input(e, *model, metric, subset, g.baseline,
                                                     2 * static_cast<int>(g.variants.size()));
      if (model == a.models.end()) {
        e.reason = "no timed call matches the condition";
      }
      if (in) {
        with_numbers.push_back(g.entries.size());
        inputs.push_back(*in);
      }
      g.entries.push_back(std::move(e));
    }
  }
  if (!inputs.empty()) {
    const auto d = stats::gate_metrics(inputs, config.alpha);
    for (std::size_t k = 0; k < with_numbers.size(); ++k) {
      auto& e = g.entries[with_numbers[k]];
      e.result = d.metrics[k];
      e.verdict = d.metrics[k].verdict;
    }
  }
  for (auto& e : g.entries) {
    apply_validity(e);
  }
  g.overall = stats::overall_verdict(g.entries);
  return g;
}

void to_json(nlohmann::json& j, const GateEntry& e) {
  j = {{"metric", e.metric},       {"where", e.where},    {"condition", condition_label(e.where)},
       {"candidate", e.candidate}, {"margin", e.margin},  {"n", e.n},
       {"validity", e.validity},   {"verdict", e.verdict}};
  if (e.block) {
    j["se_calls"] = e.se_calls;
    j["blocks"] = {{"count", e.block->blocks},
                   {"estimate", e.block->estimate},
                   {"se", e.block->se},
                   {"df", e.block->df},
                   {"units", e.block->units}};
  }
  if (e.result) {
    j["result"] = *e.result;
    j["change"] = std::expm1(e.result->better == stats::Better::higher ? -e.result->slowdown
                                                                       : e.result->slowdown);
  }
  if (!e.reason.empty()) {
    j["reason"] = e.reason;
  }
}

void to_json(nlohmann::json& j, const RunGate& g) {
  j = {{"baseline", g.baseline},
       {"variants", g.variants},
       {"alpha", g.alpha},
       {"entries", g.entries},
       {"overall", g.overall}};
}

}  // namespace kvbench::gate
