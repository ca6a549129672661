#include "harness/analysis/effects.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/analysis/effects_detail.h"
#include "harness/core/cache_level.h"
#include "harness/core/error.h"
#include "harness/core/optional_json.h"
#include "harness/stats/distributions.h"
#include "harness/stats/unit_fit.h"

namespace kvbench::analysis {

// An effect from an estimate on the log scale: 100 (e^b - 1) per cent, the interval's ends
// transformed, the SE by the delta method.
Effect relative_effect(Effect e) {
  const double b = e.estimate;
  e.estimate = 100.0 * std::expm1(b);
  e.se = 100.0 * std::exp(b) * e.se;
  e.ci.lower = 100.0 * std::expm1(e.ci.lower);
  e.ci.upper = 100.0 * std::expm1(e.ci.upper);
  if (e.im_ci) {
    e.im_ci->lower = 100.0 * std::expm1(e.im_ci->lower);
    e.im_ci->upper = 100.0 * std::expm1(e.im_ci->upper);
  }
  e.relative = true;
  return e;
}

Effect with_t_interval(Effect e, double level) {
  const double t = stats::t_quantile(0.5 + level / 2, e.df);
  e.ci = {e.estimate - t * e.se, e.estimate + t * e.se, level};
  return e;
}

namespace {

// A server setting given by number (a batch size): its level, "" where the server's own.
std::string number_level(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "";
}

bool numeric(const std::string& factor) {
  return factor == "num_ctx" || factor == "batch_size" || factor == "ubatch_size";
}

// A numeric level's order: the server's own ("") first.
long long number_order(const std::string& level) {
  return level.empty() ? -1 : std::stoll(level);
}

std::vector<RestartFactor> varying_factors(const std::vector<const CallRecord*>& calls,
                                           const std::string& reference_variant) {
  // K and V apart where a pair differs (cache_type_k=q8_0, cache_type_v=f16); else both as one,
  // named as before (cache_type=q8_0).
  const bool split = std::any_of(calls.begin(), calls.end(), [](const CallRecord* r) {
    return cache_halves(r->cache_type).split();
  });
  const RestartFactor all[] = {
      {"variant", [](const CallRecord& r) { return r.variant; }, reference_variant},
      {"cache_type", [](const CallRecord& r) { return r.cache_type; }, "f16"},
      {"cache_type_k", [](const CallRecord& r) { return cache_halves(r.cache_type).k; }, "f16"},
      {"cache_type_v", [](const CallRecord& r) { return cache_halves(r.cache_type).v; }, "f16"},
      {"num_ctx", [](const CallRecord& r) { return std::to_string(r.num_ctx); }, ""},
      {"batch_size", [](const CallRecord& r) { return number_level(r.batch_size); }, ""},
      {"ubatch_size", [](const CallRecord& r) { return number_level(r.ubatch_size); }, ""},
  };
  std::vector<RestartFactor> out;
  for (const auto& f : all) {
    if (f.name.starts_with("cache_type") && (f.name == "cache_type") == split) {
      continue;
    }
    std::set<std::string> levels;
    for (const auto* r : calls) {
      levels.insert(f.level(*r));
    }
    if (levels.size() < 2) {
      continue;
    }
    RestartFactor g = f;
    if (!levels.contains(g.reference)) {
      // num_ctx: the smallest; otherwise the first in order.
      g.reference =
          *std::min_element(levels.begin(), levels.end(), [&](const auto& a, const auto& b) {
            return numeric(f.name) ? number_order(a) < number_order(b) : a < b;
          });
    }
    out.push_back(std::move(g));
  }
  return out;
}

// A call's server setting: "cache_type=q8_0" or "cache_type=q8_0,num_ctx=8192"; empty when no
// restart-level factor varies.
std::string cell_of(const CallRecord& r, const std::vector<RestartFactor>& factors) {
  std::string out;
  for (const auto& f : factors) {
    out += (out.empty() ? "" : ",") + f.name + "=" + f.level(r);
  }
  return out;
}

std::string reference_cell(const std::vector<RestartFactor>& factors) {
  std::string out;
  for (const auto& f : factors) {
    out += (out.empty() ? "" : ",") + f.name + "=" + f.reference;
  }
  return out;
}

// The one factor in which `cell` differs from `reference`, as "cache_type=q8_0"; empty when they
// differ in none or several.
std::string single_difference(const std::string& cell, const std::string& reference) {
  const auto split = [](const std::string& s) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= s.size()) {
      const auto comma = s.find(',', start);
      parts.push_back(s.substr(start, comma - start));
      if (comma == std::string::npos) {
        break;
      }
      start = comma + 1;
    }
    return parts;
  };
  const auto a = split(cell);
  const auto b = split(reference);
  std::string diff;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) {
      if (!diff.empty()) {
        return "";
      }
      diff = a[i];
    }
  }
  return diff;
}

// What the within-unit fit gives for one metric: the slope of every cell and the interactions.
struct WithinResult {
  std::vector<Effect> effects;
  std::set<std::string> interacting;  // "cache_type=q8_0" where its slope differs (log scale)
  std::vector<std::size_t> spikes;    // rows of `rows`
  std::vector<WithheldEffect> withheld;
  std::vector<RoundLevels> round_levels;
};

// The slope of every server setting (cell) and, against the reference setting, each level's
// difference in slope (the interaction). Cells share no rounds, so their estimates are
// independent: a difference has the Welch-Satterthwaite degrees of freedom of its two parts.
WithinResult within_effects(const Metric& m, const std::vector<EffectRow>& rows,
                            const std::vector<RestartFactor>& factors) {
  const std::string ref = reference_cell(factors);
  std::map<std::string, std::vector<std::size_t>> by_cell;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    by_cell[cell_of(*rows[i].call, factors)].push_back(i);
  }
  std::vector<CellSlope> cells;
  if (by_cell.contains(ref)) {
    cells.push_back(cell_slope(rows, by_cell.at(ref), ref));
  }
  for (const auto& [cell, in_cell] : by_cell) {
    if (cell != ref) {
      cells.push_back(cell_slope(rows, in_cell, cell));
    }
  }
  WithinResult out;
  const auto base = [&](std::string term, bool relative) {
    Effect e;
    e.metric = m.key;
    e.term = std::move(term);
    e.cluster_unit = "round";
    e.unit = (relative ? std::string("%") : m.unit) + " per 1,000 prompt tokens";
    return e;
  };
  for (const bool relative : {false, true}) {
    const int s = relative ? 1 : 0;
    for (const auto& c : cells) {
      const std::string term = cells.size() == 1 ? "prompt_ktokens" : "prompt_ktokens@" + c.cell;
      if (!c.fit[s]) {
        if (!relative) {
          out.withheld.push_back({m.key, term, c.error, 0});
        }
        continue;
      }
      const auto& f = *c.fit[s];
      Effect e = base(term, relative);
      e.cluster_unit = c.by_block ? "block" : "round";
      e.estimate = f.beta(0);
      e.se = std::sqrt(f.covariance(0, 0));
      e.df = f.df;
      e.clusters = f.clusters;
      e.starts = static_cast<double>(c.starts);
      e.se_inflation = e.se / std::sqrt(f.iid_covariance(0, 0));
      if (c.im[s]) {
        e.im_ci = c.im[s]->ci;
        e.im_groups = c.im[s]->groups;
      }
      e = with_t_interval(e);
      out.effects.push_back(relative ? relative_effect(e) : e);
    }
    for (std::size_t c = 1; c < cells.size() && cells[0].cell == ref; ++c) {
      const auto level = single_difference(cells[c].cell, ref);
      if (level.empty() || !cells[c].fit[s] || !cells[0].fit[s]) {
        continue;
      }
      const auto& a = *cells[c].fit[s];
      const auto& b = *cells[0].fit[s];
      const double va = a.covariance(0, 0);
      const double vb = b.covariance(0, 0);
      Effect e = base(level + ":prompt_ktokens", relative);
      e.cluster_unit = cells[c].by_block || cells[0].by_block ? "block" : "round";
      e.estimate = a.beta(0) - b.beta(0);
      e.se = std::sqrt(va + vb);
      e.df = (va + vb) * (va + vb) / (va * va / a.df + vb * vb / b.df);
      e.clusters = a.clusters + b.clusters;
      e.starts = static_cast<double>(std::min(cells[c].starts, cells[0].starts));
      e.se_inflation = e.se / std::sqrt(a.iid_covariance(0, 0) + b.iid_covariance(0, 0));
      e = with_t_interval(e);
      if (relative && (e.ci.lower > 0 || e.ci.upper < 0)) {
        out.interacting.insert(level);
      }
      out.effects.push_back(relative ? relative_effect(e) : e);
    }
  }
  for (const auto& c : cells) {
    out.spikes.insert(out.spikes.end(), c.spikes.begin(), c.spikes.end());
    out.round_levels.push_back(round_levels(m, c.cell, c.levels, c.blocks, c.state, c.carry_over));
  }
  return out;
}

}  // namespace

Effects estimate_effects(const std::vector<const CallRecord*>& timed,
                         const std::string& reference_variant, const StartFacts& starts) {
  Effects out;
  const auto factors = varying_factors(timed, reference_variant);
  std::set<int> lengths;
  for (const auto* r : timed) {
    lengths.insert(r->prompt_tokens);
  }
  for (const auto& m : metrics()) {
    std::vector<EffectRow> rows;
    for (const auto* r : timed) {
      if (const auto v = m.value(*r); v && *v > 0 && std::isfinite(*v)) {
        rows.push_back({r, *v});
      }
    }
    if (rows.size() < 4) {
      continue;
    }
    WithinResult within;
    if (lengths.size() > 1) {
      within = within_effects(m, rows, factors);
      out.withheld.insert(out.withheld.end(), within.withheld.begin(), within.withheld.end());
      out.round_levels.insert(out.round_levels.end(), within.round_levels.begin(),
                              within.round_levels.end());
      Spikes s;
      s.metric = m.key;
      s.calls = rows.size();
      for (const auto i : within.spikes) {
        s.seq.push_back(rows[i].call->seq);
      }
      out.spikes.push_back(std::move(s));
      out.effects.insert(out.effects.end(), within.effects.begin(), within.effects.end());
    }
    if (!factors.empty()) {
      block_effects(m, rows, within.spikes, factors, within.interacting, out);
    }
  }
  cover_starts(out.effects, starts);
  return out;
}

namespace {

const results::StartTau* tau_for(const Effect& e, const std::vector<results::StartTau>& taus) {
  for (const auto& t : taus) {
    if (t.metric == e.metric && t.term == e.term && t.relative == e.relative && t.tau >= 0 &&
        std::isfinite(t.tau) && t.df > 0) {
      return &t;
    }
  }
  return nullptr;
}

// `e` with tau's variance added, scaled from the starts it was measured over to e's: on the log
// scale for a relative effect (tau in per cent becomes tau / (100 + estimate), as the delta
// method takes the SE there), Satterthwaite's degrees of freedom for the sum of the two variances.
Effect with_start_tau(Effect e, const results::StartTau& t) {
  const double scale = t.starts / std::max(1.0, e.starts);
  const double log_factor = e.relative ? 1.0 / (100.0 + e.estimate) : 1.0;
  const double se = e.se * log_factor;
  const double tau2 = t.tau * log_factor * t.tau * log_factor * scale;
  const double var = se * se + tau2;
  const double df = var * var / (se * se * se * se / e.df + tau2 * tau2 / t.df);
  Effect out = e;
  out.df = std::isfinite(df) ? df : e.df;
  out.start_tau = t;
  out.start_tau->tau = std::sqrt(tau2) / log_factor;
  if (!e.relative) {
    out.se = std::sqrt(var);
    return with_t_interval(out);
  }
  // Back to the log scale, the interval there, and to per cent again.
  out.estimate = std::log1p(e.estimate / 100.0);
  out.se = std::sqrt(var);
  out.relative = false;
  out.im_ci.reset();
  out = relative_effect(with_t_interval(out));
  out.im_ci = e.im_ci;
  return out;
}

}  // namespace

void cover_starts(std::vector<Effect>& effects, const StartFacts& starts) {
  for (auto& e : effects) {
    const bool on_starts = e.cluster_unit == "block" && !starts.one_start;
    e.covers = on_starts ? "machine" : "this_start";
    if (e.se <= 0 || e.df <= 0) {
      continue;
    }
    // Also on four starts or more: runs of a few seconds share the machine's state of those
    // seconds, which moves over minutes (on one VM the decode slope of 30 quick starts of four
    // starts each moved 3.7 points from run to run against SEs of about 1.4).
    if (const auto* t = tau_for(e, starts.taus)) {
      e = with_start_tau(e, *t);
      e.covers = "machine";
    }
  }
}

void to_json(nlohmann::json& j, const Effect& e) {
  j = {{"metric", e.metric},
       {"term", e.term},
       {"estimate", e.estimate},
       {"se", e.se},
       {"ci", e.ci},
       {"df", e.df},
       {"clusters", e.clusters},
       {"cluster_unit", e.cluster_unit},
       {"unit", e.unit},
       {"relative", e.relative},
       {"se_inflation", or_null(e.se_inflation)},
       {"covers", e.covers},
       {"starts", e.starts},
       {"im", e.im_ci ? nlohmann::json{{"groups", e.im_groups}, {"ci", *e.im_ci}}
                      : nlohmann::json(nullptr)}};
  if (e.start_tau) {
    j["start_tau"] = {{"tau", e.start_tau->tau},
                      {"df", e.start_tau->df},
                      {"runs", e.start_tau->runs},
                      {"measured", e.start_tau->measured}};
  }
}

void to_json(nlohmann::json& j, const WithheldEffect& w) {
  j = {{"metric", w.metric},
       {"term", w.term},
       {"reason", w.reason},
       {"blocks_needed_per_level", w.blocks_needed}};
}

void to_json(nlohmann::json& j, const Spikes& s) {
  j = {{"metric", s.metric}, {"calls", s.calls}, {"spikes", s.seq}};
}

}  // namespace kvbench::analysis
