#include "harness/analysis/effects_verdict.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/analysis/analysis.h"
#include "harness/stats/distributions.h"

namespace kvbench::analysis {
namespace {

std::string label_of(const std::string& key) {
  const auto* m = metric_named(key);
  return m != nullptr ? m->label : key;
}

std::string where(const std::string& cell) {
  return cell.empty() ? std::string() : fmt::format(" at {}", cell);
}

// The width of a relative interval on the log scale, where it is symmetric.
double log_width(const stats::Interval& ci) {
  const auto log_of = [](double percent) { return std::log(std::max(1e-300, 1 + percent / 100)); };
  return log_of(ci.upper) - log_of(ci.lower);
}

// The Ibragimov-Mueller intervals of TTFT's and the decode rate's slopes beside the clustered
// ones, with the ratio of their widths on the log scale; nothing where none was computed.
std::optional<std::string> cross_check(const Effects& effects) {
  std::vector<std::string> checks;
  for (const auto& e : effects.effects) {
    if (e.relative && e.im_ci && e.term.starts_with("prompt_ktokens") &&
        (e.metric == "ttft_ms" || e.metric == "decode_tps")) {
      const auto at = e.term.find('@');
      checks.push_back(fmt::format(
          "{}{} [{:+.1f}, {:+.1f}] % over {} groups, {:.1f}x the clustered interval's width",
          label_of(e.metric), where(at == std::string::npos ? "" : e.term.substr(at + 1)),
          e.im_ci->lower, e.im_ci->upper, e.im_groups, log_width(*e.im_ci) / log_width(e.ci)));
    }
  }
  if (checks.empty()) {
    return std::nullopt;
  }
  return fmt::format(
      "cross-check, with no model of the noise at all (Ibragimov-Mueller: the slope fitted in each "
      "group of consecutive rounds, or of whole server starts where those are the units, on its "
      "own, t over the groups): {}; much wider there means the clustered interval leans on its "
      "units more than they bear",
      fmt::join(checks, "; "));
}

void judge_honest(const Effects& effects, VerdictAxis& axis) {
  // The fewest and most independent units of the intervals on each kind of unit.
  std::map<std::string, std::pair<std::size_t, std::size_t>> units;
  for (const auto& e : effects.effects) {
    auto& [fewest, most] = units[e.cluster_unit];
    fewest = fewest == 0 ? e.clusters : std::min(fewest, e.clusters);
    most = std::max(most, e.clusters);
  }
  for (const auto& r : effects.round_levels) {
    const double bound = 2.0 / std::sqrt(static_cast<double>(r.levels.size()));
    if (r.lag1 && r.levels.size() >= 8 && *r.lag1 > bound) {
      axis.ok = false;
      axis.findings.push_back(fmt::format(
          "{}{}: consecutive rounds' levels correlate (r = {:.2f} > 2/sqrt({}) = {:.2f}): the "
          "machine's state outlasts a round, and the intervals within rounds may be too narrow; "
          "more calls per round or rounds spaced further apart help",
          label_of(r.metric), where(r.cell), *r.lag1, r.levels.size(), bound));
    }
  }
  std::set<std::string> withheld;
  for (const auto& w : effects.withheld) {
    if (w.blocks_needed > 0 && withheld.insert(w.term).second) {
      axis.findings.push_back(fmt::format(
          "`{}` gets no interval: it changes only with a server restart and has too few blocks "
          "(at least {} per level, alternated A B B A)",
          w.term, w.blocks_needed));
    }
  }
  if (axis.ok && units.contains("round")) {
    const auto [fewest, most] = units.at("round");
    axis.findings.insert(
        axis.findings.begin(),
        fmt::format("every interval within rounds rests on its rounds ({} to {}), and consecutive "
                    "rounds' levels do not correlate beyond chance",
                    fewest, most));
  }
  if (units.contains("block")) {
    // Which intervals rest on starts: restart-level settings, slopes under four starts or more.
    bool setting = false;
    bool slope = false;
    for (const auto& e : effects.effects) {
      if (e.cluster_unit == "block") {
        (e.term.starts_with("prompt_ktokens") || e.term.ends_with(":prompt_ktokens") ? slope
                                                                                     : setting) =
            true;
      }
    }
    const auto [fewest, most] = units.at("block");
    axis.findings.push_back(fmt::format(
        "every interval over server starts rests on its starts ({} to {}): {}", fewest, most,
        setting && slope ? "a setting that needs a restart, and a slope measured under four "
                           "starts or more, which may each set their own"
        : setting        ? "a setting that needs a restart"
                         : "a slope measured under four starts or more, which may each set "
                           "their own"));
  }

  if (auto check = cross_check(effects)) {
    axis.findings.push_back(std::move(*check));
  }
}

StartCover judge_cover(const Effects& effects, VerdictAxis& axis) {
  StartCover c;
  std::set<std::string> only_here;
  for (const auto& e : effects.effects) {
    if (!e.relative) {
      continue;
    }
    c.fewest_starts =
        c.machine + c.this_start == 0 ? e.starts : std::min(c.fewest_starts, e.starts);
    if (e.covers == "machine") {
      ++c.machine;
      if (e.start_tau) {
        ++c.borrowed;
        c.measured = std::max(c.measured, e.start_tau->measured);
      }
    } else {
      ++c.this_start;
      only_here.insert(e.term);
    }
  }
  if (!only_here.empty()) {
    axis.findings.push_back(fmt::format(
        "the intervals of {} cover this server start only: every round of a start shares the "
        "speed and slope that start set, so they cannot show how far the next start lands; {} "
        "server starts per setting (`\"block_repeats\": {}` in the scenario) or a "
        "start-to-start component measured on this machine (`kvbench repeat 10 SCENARIO "
        "--history H`, then `kvbench run --history H`) would cover the machine",
        fmt::join(only_here, ", "), kMinBlocksPerLevel, kMinBlocksPerLevel));
  }
  if (c.borrowed > 0) {
    axis.findings.push_back(fmt::format(
        "{} interval(s) add the start-to-start component measured on this machine, server build "
        "and model (`kvbench repeat`, newest {}): they cover the machine as that measurement "
        "saw it",
        c.borrowed, c.measured.empty() ? "of unknown date" : c.measured));
  }
  return c;
}

void judge_precise(const Effects& effects, VerdictAxis& axis) {
  for (const auto& e : effects.effects) {
    if (!e.relative || !e.term.starts_with("prompt_ktokens")) {
      continue;
    }
    const char* units = e.cluster_unit == "block" ? "server starts" : "rounds";
    // On the log scale, where the interval is symmetric: the SE of b from the relative SE
    // (delta method: se = 100 e^b se_b), the smallest change found as a factor.
    const double se_b = e.se / (100 + e.estimate);
    const double mde =
        std::exp((stats::t_quantile(0.975, e.df) + stats::t_quantile(0.8, e.df)) * se_b);
    const bool resolved = e.ci.lower > 0 || e.ci.upper < 0;
    const auto at = e.term.find('@');
    const std::string cell = at == std::string::npos ? std::string() : e.term.substr(at + 1);
    axis.ok = axis.ok && resolved;
    axis.findings.push_back(fmt::format(
        "{} per 1,000 prompt tokens{}: {:+.1f} % [{:+.1f}, {:+.1f}] over {} {}; the smallest "
        "change in it this run would find (80 % power) is a factor of {:.2f}, and {} more {} "
        "would bring that to {:.2f}",
        label_of(e.metric), where(cell), e.estimate, e.ci.lower, e.ci.upper, e.clusters, units, mde,
        3 * e.clusters, units, std::sqrt(mde)));
  }
}

void judge_steps(const Effects& effects, VerdictAxis& axis) {
  for (const auto& r : effects.round_levels) {
    if (!r.step) {
      continue;
    }
    axis.ok = false;
    axis.findings.push_back(fmt::format(
        "{}{}: the machine's speed changed once and stayed changed (from round {} of server start "
        "{} on, the level moved {:+.0f} %, p = {:.2g} over the splits tried): effects within "
        "rounds are measured on both sides of it, but the run's absolute levels and the headline's "
        "smooth drift mix two speeds",
        label_of(r.metric), where(r.cell), r.step->round + 1, r.step->block + 1, r.step->relative,
        r.step->p));
  }
}

// Carry-over in TTFT and the decode rate (the server's metrics repeat them), each setting judged at
// 1 % split over all of them (Bonferroni).
void judge_carry_over(const Effects& effects, VerdictAxis& axis) {
  const auto judged = [](const RoundLevels& r) {
    return r.carry_over && (r.metric == "ttft_ms" || r.metric == "decode_tps");
  };
  const auto tests =
      std::count_if(effects.round_levels.begin(), effects.round_levels.end(), judged);
  for (const auto& r : effects.round_levels) {
    if (!judged(r) || r.carry_over->p >= 0.01 / static_cast<double>(tests)) {
      continue;
    }
    const auto& c = *r.carry_over;
    axis.ok = false;
    axis.findings.push_back(fmt::format(
        "{}{}: a call is {:+.1f} % [{:+.1f}, {:+.1f}] off per 1,000 prompt tokens of the call "
        "before it (p = {:.2g}): one call leaves the server or the machine changed for the next, "
        "and in shuffled rounds a short call follows a long one more often than a long call "
        "does, so the slope takes some of it in; a pause or a short call between timed calls, "
        "or a server that gives back its memory, removes it",
        label_of(r.metric), where(r.cell), c.relative, c.ci.lower, c.ci.upper, c.p));
  }
}

void judge_structure(const Effects& effects, VerdictAxis& axis) {
  judge_steps(effects, axis);
  judge_carry_over(effects, axis);
  for (const auto& r : effects.round_levels) {
    if (!r.state_slope_ci || (r.state_slope_ci->lower <= 0 && r.state_slope_ci->upper >= 0)) {
      continue;
    }
    axis.ok = false;
    // A round 10 % slower than the run's mean: log level + log 1.1.
    const double steeper = 100 * std::expm1(*r.state_slope * std::log(1.1));
    axis.findings.push_back(fmt::format(
        "{}{}: the cost per prompt token differs between fast and slow rounds (in a round 10 % "
        "slower, the factor per 1,000 prompt tokens changes by {:+.1f} %): the machine's slow "
        "stretches are not a plain slow-down of every call, the slope describes this run's mix "
        "of them, and another run's mix gives another slope",
        label_of(r.metric), where(r.cell), steeper));
  }
  for (const auto& e : effects.effects) {
    if (e.relative && e.term.ends_with(":prompt_ktokens") && (e.ci.lower > 0 || e.ci.upper < 0)) {
      axis.findings.push_back(fmt::format(
          "{}: `{}` changes the cost per prompt token ({:+.1f} % [{:+.1f}, {:+.1f}]): each "
          "setting's slope is given, and its level at each prompt length",
          label_of(e.metric), e.term.substr(0, e.term.find(':')), e.estimate, e.ci.lower,
          e.ci.upper));
    }
  }
}

}  // namespace

bool speaks_to_trust(const std::string& rule) {
  return rule == "valid_calls" || rule == "failed_calls" || rule == "corr_x_t" ||
         rule == "throttling";
}

EffectsVerdict judge_effects(const Effects& effects,
                             const std::vector<stats::ValidityReason>& checks) {
  EffectsVerdict v;
  v.present = !effects.effects.empty() || !effects.withheld.empty();
  if (!v.present) {
    return v;
  }
  judge_honest(effects, v.honest);
  v.cover = judge_cover(effects, v.honest);
  judge_precise(effects, v.precise);
  judge_structure(effects, v.structure);
  // Failed calls leave the rest a sample that may not be fair; a shuffle that failed ties prompt
  // length to time; throttling is the machine changing its own speed.
  std::set<std::string> said;
  for (const auto& c : checks) {
    if (!speaks_to_trust(c.rule) || !said.insert(c.message).second) {
      continue;
    }
    VerdictAxis& axis = c.rule == "corr_x_t" || c.rule == "throttling" ? v.structure : v.honest;
    axis.ok = false;
    axis.findings.push_back(c.message);
  }
  if (v.structure.findings.empty()) {
    v.structure.findings.push_back(
        "no effect differs between fast and slow rounds, no server setting changes the cost per "
        "prompt token, the machine's speed did not change once and stay changed, and no call "
        "carries over to the next");
  }
  return v;
}

void to_json(nlohmann::json& j, const VerdictAxis& a) {
  j = {{"ok", a.ok}, {"findings", a.findings}};
}

void to_json(nlohmann::json& j, const StartCover& c) {
  j = {{"machine", c.machine},
       {"this_start", c.this_start},
       {"borrowed", c.borrowed},
       {"fewest_starts", c.fewest_starts}};
}

void to_json(nlohmann::json& j, const EffectsVerdict& v) {
  j = {{"honest", v.honest},
       {"precise", v.precise},
       {"structure", v.structure},
       {"covers", v.cover}};
}

}  // namespace kvbench::analysis
