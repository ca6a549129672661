#include "harness/report/effects.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/report/sections.h"

namespace kvbench::report {

namespace {

using analysis::Analysis;
using analysis::MetricModel;

const analysis::Metric& metric_of(const std::string& key) {
  const auto* m = analysis::metric_named(key);
  return m != nullptr ? *m : analysis::metrics().front();
}

std::string signed_ci(const stats::Coefficient& c, int precision) {
  return fmt::format("{:+.{}f} [95% CI {:+.{}f}, {:+.{}f}]", c.estimate, precision, c.ci.lower,
                     precision, c.ci.upper, precision);
}

std::string percent_ci(const stats::RelativeEffect& e) {
  return fmt::format("{:+.1f}% [{:+.1f}, {:+.1f}]", 100 * e.relative, 100 * e.ci.lower,
                     100 * e.ci.upper);
}

const stats::RelativeEffect* relative(const stats::ModelFit& fit, const std::string& name) {
  for (const auto& e : fit.relative_effects) {
    if (e.name == name) {
      return &e;
    }
  }
  return nullptr;
}

std::string per_unit(const std::string& term) {
  if (term == "prompt_ktokens") {
    return "per 1,000 prompt tokens";
  }
  if (term == "num_ctx_k") {
    return "per 1,000 tokens of num_ctx";
  }
  return "for " + term;
}

int precision_for(const std::string& unit) {
  return unit == "ms" ? 1 : 2;
}

void write_effect_line(std::ostream& out, const MetricModel& m) {
  const auto& metric = metric_of(m.metric);
  if (!m.fit) {
    out << fmt::format("- **{}**: no model ({})\n", metric.label, m.error);
    return;
  }
  const auto& lin = m.fit->linear;
  const int pr = precision_for(metric.unit);
  std::string line = fmt::format("- **{}**:", metric.label);
  for (const auto& term : m.numeric) {
    const auto& c = lin.coefficient(term);
    line += fmt::format(" {} {} {}", signed_ci(c, pr), metric.unit, per_unit(term));
    if (const auto* e = relative(*m.fit, term)) {
      line += fmt::format(" ({} relative)", percent_ci(*e));
    }
    line += ";";
  }
  for (const auto& d : m.fit->dummies) {
    for (const auto& level : d.levels) {
      const std::string name = d.factor + "=" + level;
      line += fmt::format(" {} against {}: {} {}", name, d.reference,
                          signed_ci(lin.coefficient(name), pr), metric.unit);
      if (const auto* e = relative(*m.fit, name)) {
        line += fmt::format(" ({} relative)", percent_ci(*e));
      }
      line += ";";
    }
  }
  const auto& b0 = lin.coefficient(stats::kInterceptName);
  line += fmt::format(" from {:.{}f} {} at 0 tokens", b0.estimate, pr, metric.unit);
  const auto& drift = lin.coefficient(stats::kTimeName);
  line += fmt::format("; drift {} {} per minute", signed_ci(drift, pr + 1), metric.unit);
  out << line << ".\n";
}

// "candidate vs baseline: decode rate -12.3 % [-15.0, -9.5]", from each log model's variant
// terms (95 % CI; drift and the other factors held fixed).
void write_variant_effects(std::ostream& out, const Analysis& a) {
  std::string lines;
  for (const auto& m : a.models) {
    if (!m.fit) {
      continue;
    }
    for (const auto& d : m.fit->dummies) {
      if (d.factor != "variant") {
        continue;
      }
      for (const auto& level : d.levels) {
        if (const auto* e = relative(*m.fit, "variant=" + level)) {
          lines += fmt::format("- {} vs {}: {} {:+.1f} % [{:+.1f}, {:+.1f}]\n", level, d.reference,
                               metric_of(m.metric).label, 100 * e->relative, 100 * e->ci.lower,
                               100 * e->ci.upper);
        }
      }
    }
  }
  if (!lines.empty()) {
    out << "Server variants, relative to the baseline (log model, 95% CI, drift and the other "
           "factors held fixed):\n\n"
        << lines << "\n";
  }
}

void write_diagnostics(std::ostream& out, const Analysis& a) {
  out << "\n### Diagnostics\n\n";
  out << "Columns R² to Huber are of the additive linear fit; pure error (the spread of calls "
         "repeated in one condition, drift taken out) and the Durbin-Watson in brackets are of "
         "the headline model, and validity judges them.\n\n";
  out << "| metric | n | R² | adj R² | residual SE | CV resid | pure error | Durbin-Watson | VIF "
         "prompt | |r|>3 | Cook's D > 4/n | Huber differs | validity |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& m : a.models) {
    if (!m.fit) {
      continue;
    }
    const auto& l = m.fit->linear;
    std::string vif = "-";
    if (!m.numeric.empty()) {
      vif = fmt::format("{:.2f}", l.coefficient(m.numeric.front()).vif);
    }
    std::string validity = m.validity.empty() ? "ok" : "";
    for (const auto& v : m.validity) {
      validity += (validity.empty() ? "" : "; ") + v.message;
    }
    std::string dw = fmt::format("{:.2f}", l.durbin_watson);
    if (m.durbin_watson_t2) {
      dw += fmt::format(" ({:.2f} with t²)", *m.durbin_watson_t2);
    }
    std::string pure = "-";
    if (m.slowdown) {
      if (m.slowdown->pure_error) {
        pure = fmt::format("{:.1f}%", 100 * *m.slowdown->pure_error);
      }
      if (m.slowdown->durbin_watson) {
        dw += fmt::format(" [{:.2f}]", *m.slowdown->durbin_watson);
      }
    }
    out << fmt::format(
        "| {} | {} | {:.3f} | {:.3f} | {:.3g} | {:.1f}% | {} | {} | {} | {} | {} | {} | {} "
        "|\n",
        m.metric, l.n, l.r_squared, l.adj_r_squared, l.residual_se, 100 * l.cv_resid, pure, dw, vif,
        l.studentized_flags.size(), l.cooks_flags.size(),
        m.huber && m.huber->any_differs_from_ols ? "yes" : "no", validity);
  }
}

void write_probes(std::ostream& out, const Analysis& a) {
  if (a.probes.empty()) {
    return;
  }
  out << "\n### Drift probes\n\n";
  out << "A fixed reference call at the start of each block, every few calls and at the end. "
         "Theil-Sen slope over elapsed minutes, and the drift it gives over the run (its CI from "
         "the "
         "slope's alone); beside it "
         "the drift the headline model took out (g at the last call, minus 1).\n\n";
  out << "| metric | probes | Theil-Sen slope per minute [95% CI] | drift over the run [95% CI] | "
         "the headline model's drift [95% CI] |\n|---|---:|---|---:|---|\n";
  for (const auto& p : a.probes) {
    std::string slope = "-";
    std::string rel = "-";
    if (p.fit) {
      slope = fmt::format("{:+.4g} [{:+.4g}, {:+.4g}]", p.fit->slope, p.fit->slope_ci.lower,
                          p.fit->slope_ci.upper);
    }
    if (p.relative_drift) {
      rel = fmt::format("{:+.1f}%", 100 * *p.relative_drift);
      if (p.relative_drift_ci) {
        rel += fmt::format(" [{:+.1f}, {:+.1f}]", 100 * p.relative_drift_ci->lower,
                           100 * p.relative_drift_ci->upper);
      }
    }
    std::string fitted = "-";
    for (const auto& m : a.models) {
      if (m.metric == p.metric && m.slowdown) {
        const auto& sd = *m.slowdown;
        fitted = fmt::format("{:+.1f}% [{:+.1f}, {:+.1f}]", 100 * (sd.slow_down_end - 1),
                             100 * (sd.slow_down_end_ci.lower - 1),
                             100 * (sd.slow_down_end_ci.upper - 1));
      }
    }
    out << fmt::format("| {} | {} | {} | {} | {} |\n", p.metric, p.values.size(), slope, rel,
                       fitted);
  }
}

std::string ci_text(double estimate, const stats::Interval& ci, int precision) {
  return fmt::format("{:+.{}f} [{:+.{}f}, {:+.{}f}]", estimate, precision, ci.lower, precision,
                     ci.upper, precision);
}

// "- **TTFT**: +205.0 [+169.5, +240.5] ms per 1,000 prompt tokens, average over 256-2048\n//
// tokens; ... the machine ran 1.20x [1.10, 1.31] slower at the end (8.3 min)."
void write_headline_line(std::ostream& out, const MetricModel& m) {
  const auto& metric = metric_of(m.metric);
  if (!m.slowdown) {
    return;
  }
  const auto& s = *m.slowdown;
  const int pr = precision_for(metric.unit);
  std::string line = fmt::format("- **{}**:", metric.label);
  for (const auto& e : s.effects) {
    line += fmt::format(" {} {} {};", ci_text(e.estimate, e.ci, pr), metric.unit, e.what);
  }
  line += fmt::format(" g at the end ({:.1f} min) {:.3f} [{:.3f}, {:.3f}]", s.t_end_min,
                      s.slow_down_end, s.slow_down_end_ci.lower, s.slow_down_end_ci.upper);
  line += metric.unit == "ms" ? " (the time of a call against its time at the start)"
                              : " (the rate against the rate at the start)";
  out << line << ".\n";
  if (s.prefill) {
    const auto& p = *s.prefill;
    std::string costs;
    for (const auto& c : p.marginal) {
      costs += fmt::format("{}{} at {} tokens", costs.empty() ? "" : ", ",
                           ci_text(c.estimate, c.ci, pr), c.prompt_tokens);
    }
    out << fmt::format(
        "  - shape: {} {} per 1,000 tokens and {} {} per (1,000 tokens)²; the cost of the next "
        "1,000 tokens is {}",
        ci_text(p.linear.estimate, p.linear.ci, pr), metric.unit,
        ci_text(p.quadratic.estimate, p.quadratic.ci, pr), metric.unit, costs);
    if (p.crossover_tokens) {
      out << fmt::format("; the L² term equals the linear one at {:.0f} tokens",
                         *p.crossover_tokens);
    }
    out << ".\n";
  } else if (s.quadratic_test) {
    out << fmt::format(
        "  - straight in prompt length: an L² term was not needed (F test p = "
        "{:.2f}).\n",
        s.quadratic_test->p);
  }
  if (s.lack_of_fit) {
    const auto& f = *s.lack_of_fit;
    out << fmt::format(
        "  - lack of fit against one mean per condition: F({:.0f}, {:.0f}) = {:.2f}, p = "
        "{:.3f}{}\n",
        f.df1, f.df2, f.f, f.p,
        f.p < 0.05 ? ": the shape misses some condition means (a finding about the shape, not "
                     "noise)"
                   : "");
  }
  if (s.clock) {
    const auto& c = *s.clock;
    std::string effects;
    for (const auto& e : c.effects) {
      effects += fmt::format("{}{} {} {}", effects.empty() ? "" : "; ",
                             ci_text(e.estimate, e.ci, pr), metric.unit, e.what);
    }
    out << fmt::format(
        "  - the CPU clock ({:.0f}-{:.0f} MHz) as a covariate beside time: elasticity {:+.2f} "
        "[{:+.2f}, {:+.2f}] (1 % more clock, that many % on the metric); BIC {:.1f} against "
        "{:.1f} for time alone ({}); with it: {}.\n",
        c.clock_min_mhz, c.clock_max_mhz, c.elasticity.estimate, c.elasticity.ci.lower,
        c.elasticity.ci.upper, c.fit.bic, c.bic_time_only,
        c.preferred ? "lower by 2 or more: the clock explains more" : "time alone does as well",
        effects);
  } else if (!s.clock_note.empty()) {
    out << "  - " << s.clock_note << ".\n";
  }
}

void write_headline(std::ostream& out, const Analysis& a) {
  const bool any = std::any_of(a.models.begin(), a.models.end(),
                               [](const MetricModel& m) { return m.slowdown.has_value(); });
  if (!any) {
    return;
  }
  out << "Headline effects at the run's starting speed (95% CI). Model: metric = shape of the "
         "factors x g(t), where g is the machine's slow-down over elapsed minutes (g(0) = 1, "
         "log g a polynomial whose degree the BIC picks), each call's error a fraction of its "
         "value; prefill times have a term in L² at three or more prompt lengths.\n\n";
  for (const auto& m : a.models) {
    write_headline_line(out, m);
  }
  out << "\nThe additive model (a time term added to the metric), for comparison:\n\n";
}

}  // namespace

// What the validity rules measured, per metric, which they pass, and which had nothing to fit.
// They are facts about this run: noise and drift in them widen the intervals, and only failed
// calls, a failed shuffle and throttling reach the verdict on trust.
void write_validity_measured(std::ostream& out, const Analysis& a) {
  if (std::all_of(a.models.begin(), a.models.end(),
                  [](const MetricModel& m) { return m.validity.empty(); })) {
    out << "\nThe validity rules found nothing to object to.\n";
    return;
  }
  out << "\nWhat the validity rules measured (see validity below). Noise and drift widen the "
         "intervals and never make a run untrustworthy on their own; failed calls, a failed "
         "shuffle and throttling are part of how far to trust the effects.\n\n";
  std::vector<std::string> passed;
  std::vector<std::string> unfitted;
  bool spread = false;
  for (const auto& m : a.models) {
    const std::string& label = metric_of(m.metric).label;
    if (!m.fit && !m.slowdown) {
      unfitted.push_back(
          fmt::format("- {}: no model ({})\n", label, m.n == 0 ? "no call gave a value" : m.error));
      continue;
    }
    if (m.validity.empty()) {
      passed.push_back(label);
      continue;
    }
    std::vector<std::string> reasons;
    for (const auto& v : m.validity) {
      reasons.push_back(v.message);
      // Only a measured pure error is the machine's: without repeats the spread is the shape's.
      spread = spread || (v.rule == "pure_error" && m.slowdown && m.slowdown->pure_error);
    }
    out << fmt::format("- {}: {}\n", label, fmt::join(reasons, "; "));
  }
  if (!passed.empty()) {
    out << fmt::format("- {}: nothing to object to\n", fmt::join(passed, ", "));
  }
  for (const auto& line : unfitted) {
    out << line;
  }
  if (spread) {
    out << fmt::format(
        "\nCalls of one condition that vary by more than {:.0f} % with the drift taken out are the "
        "machine's noise: another process or tenant on the same cores, calls too short to time "
        "(few prompt or decoded tokens), or a server on every core kvbench needs too. The CIs "
        "above include it; a quieter machine, longer calls, `server.threads` below the core "
        "count or more rounds (`precision`) narrow it.\n",
        100 * stats::ValidityLimits{}.max_pure_error);
  }
}

void write_effects_markdown(std::ostream& out, const Analysis& a) {
  out << "\n## Effects\n\n";
  if (a.models.empty()) {
    out << "No timed call succeeded: nothing to fit.\n";
    return;
  }
  write_headline(out, a);
  out << "Ordinary least squares of each metric on the factors that vary and on elapsed "
         "minutes since the first timed call (the drift term), over the shuffled calls; "
         "relative effects from the same model on the log scale.\n\n";
  write_variant_effects(out, a);
  for (const auto& m : a.models) {
    write_effect_line(out, m);
  }
  if (a.corr_prompt_time) {
    out << fmt::format(
        "\nCorrelation of prompt length with elapsed time: {:+.2f} (shuffling "
        "keeps it near 0).\n",
        *a.corr_prompt_time);
  }
  write_unit_effects_markdown(out, a.effects, a.verdict);
  write_validity_measured(out, a);
  write_probes(out, a);
  write_diagnostics(out, a);
  write_descriptive_markdown(out, a);
}

}  // namespace kvbench::report
