#include "harness/report/repeat.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/core/error.h"

namespace kvbench::report {

namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // metric, term, unit

struct Gathered {
  bool relative = false;
  bool this_start = false;
  double starts = 0;  // summed over the runs
  std::vector<stats::RunEstimate> runs;
  std::vector<double> estimates;
};

std::string calibration_words(const RepeatedEffect& e) {
  if (!e.judged()) {
    return fmt::format("not judged ({:.2f})", e.across.scores_birge);
  }
  return fmt::format("{} ({:.2f} {} {:.2f})", e.across.honest() ? "honest" : "too narrow",
                     e.across.scores_birge, e.across.honest() ? "≤" : ">", e.across.bound);
}

// What the runs' intervals claimed to cover: "machine" or "this start (1 per setting)".
std::string covers_words(const RepeatedEffect& e) {
  return e.this_start ? fmt::format("this start ({:.3g} per setting)", e.starts)
                      : fmt::format("machine ({:.3g} starts)", e.starts);
}

// "TTFT" for ttft_ms; the key itself for a metric this version does not know.
std::string label_of(const std::string& metric) {
  const auto* m = analysis::metric_named(metric);
  return m != nullptr ? m->label : metric;
}

// Decimals that show the runs' SD with two significant digits (0 to 4).
int decimals(double sd) {
  if (!(sd > 0) || !std::isfinite(sd)) {
    return 1;
  }
  return std::clamp(1 - static_cast<int>(std::floor(std::log10(sd))), 0, 4);
}

std::string mean_ci(const stats::AcrossRuns& a) {
  const int d = decimals(a.sd);
  return fmt::format("{:+.{}f} [{:+.{}f}, {:+.{}f}]", a.mean, d, a.ci.lower, d, a.ci.upper, d);
}

}  // namespace

bool RepeatReport::calibrated() const {
  for (const auto& e : effects) {
    if (e.judged() && !e.across.honest()) {
      return false;
    }
  }
  return true;
}

RepeatReport repeat_report(const std::string& scenario, const std::vector<RepeatRun>& runs,
                           double alpha) {
  if (runs.size() < 2) {
    throw Error(fmt::format("repeat: needs 2 runs or more, got {}", runs.size()));
  }
  RepeatReport r;
  r.scenario = scenario;
  r.alpha = alpha;
  std::map<Key, Gathered> by_key;
  std::vector<Key> order;
  for (const auto& run : runs) {
    r.runs.push_back(run.dir);
    if (run.scenario_hash != runs.front().scenario_hash) {
      r.notes.push_back(fmt::format("{} ran another resolved scenario than {} ({} against {})",
                                    run.dir, runs.front().dir, run.scenario_hash,
                                    runs.front().scenario_hash));
    }
    for (const auto& e : run.effects.effects) {
      if (!(e.se > 0) || !std::isfinite(e.estimate)) {
        continue;
      }
      const Key key{e.metric, e.term, e.unit};
      auto [it, added] = by_key.try_emplace(key);
      if (added) {
        order.push_back(key);
      }
      it->second.relative = e.relative;
      it->second.this_start = it->second.this_start || e.covers != "machine";
      it->second.starts += e.starts;
      it->second.runs.push_back({e.estimate, e.se, e.df});
      it->second.estimates.push_back(e.estimate);
    }
  }
  for (const auto& key : order) {
    const auto& g = by_key.at(key);
    if (g.runs.size() < 2) {
      r.notes.push_back(fmt::format("{} {} ({}): in {} of {} runs, too few to compare",
                                    std::get<0>(key), std::get<1>(key), std::get<2>(key),
                                    g.runs.size(), runs.size()));
      continue;
    }
    r.judged += g.relative ? 1 : 0;
  }
  const double judged_alpha = alpha / static_cast<double>(std::max<std::size_t>(1, r.judged));
  for (const auto& key : order) {
    const auto& g = by_key.at(key);
    if (g.runs.size() < 2) {
      continue;
    }
    RepeatedEffect e;
    std::tie(e.metric, e.term, e.unit) = key;
    e.relative = g.relative;
    e.estimates = g.estimates;
    e.this_start = g.this_start;
    e.starts = g.starts / static_cast<double>(g.runs.size());
    e.across = stats::across_runs(g.runs, 0.95, judged_alpha);
    r.effects.push_back(std::move(e));
  }
  return r;
}

Table repeat_table(const RepeatReport& r) {
  Table t({{"metric", false},
           {"term", false},
           {"unit", false},
           {"runs", true},
           {"mean", true},
           {"ci_lower", true},
           {"ci_upper", true},
           {"sd", true},
           {"birge", true},
           {"tau", true},
           {"covers", false},
           {"calibration", false}});
  for (const auto& e : r.effects) {
    const auto& a = e.across;
    t.add_row({e.metric, e.term, e.unit, std::to_string(a.runs), fmt::format("{:.4g}", a.mean),
               fmt::format("{:.4g}", a.ci.lower), fmt::format("{:.4g}", a.ci.upper),
               fmt::format("{:.3g}", a.sd), fmt::format("{:.3f}", a.birge),
               fmt::format("{:.3g}", std::sqrt(a.tau2)), e.this_start ? "this_start" : "machine",
               calibration_words(e)});
  }
  return t;
}

void write_repeat_markdown(std::ostream& out, const RepeatReport& r) {
  out << fmt::format("# kvbench repeat: {} runs of {}\n\n", r.runs.size(), r.scenario);
  for (const auto& dir : r.runs) {
    out << "- " << dir << "\n";
  }
  out << "\nEach headline effect over the runs: their mean with a 95 % t interval over runs (what "
         "a rerun on this machine may give), their SD, the Birge ratio (the runs' spread against "
         "their own SEs; about 1 when a single run's interval is honest), tau (the run-to-run SD "
         "a single run's interval leaves out, DerSimonian-Laird) and the calibration (each run "
         "against the mean of the others, as normal scores through its own t; their root mean "
         "square against the chi^2 bound).\n\n";
  Table t({{"effect", false},
           {"unit", false},
           {"runs", true},
           {"mean [95 % CI over runs]", false},
           {"SD", true},
           {"Birge", true},
           {"tau", true},
           {"covers", false},
           {"calibration", false}});
  for (const auto& e : r.effects) {
    const auto& a = e.across;
    t.add_row({label_of(e.metric) + " " + e.term, e.unit, std::to_string(a.runs), mean_ci(a),
               fmt::format("{:.{}f}", a.sd, decimals(a.sd)), fmt::format("{:.2f}", a.birge),
               fmt::format("{:.{}f}", std::sqrt(a.tau2), decimals(a.sd)), covers_words(e),
               calibration_words(e)});
  }
  t.write_markdown(out);
  out << fmt::format(
      "\nJudged: the {} relative effects (the forms that travel between runs), each at {:.3g} "
      "(5 % split over them). Effects in ms or tok/s scale with the machine's speed, which "
      "moves between runs: their tau says by how much, and a single run's interval does not "
      "include it.\n",
      r.judged, r.alpha / static_cast<double>(std::max<std::size_t>(1, r.judged)));
  if (r.judged > 0) {
    out << (r.calibrated() ? "\nEvery judged interval held across the runs.\n"
                           : "\nSome single-run intervals were too narrow for how far the next "
                             "run landed (marked above): read them with the interval over runs.\n");
  }
  for (const auto& n : r.notes) {
    out << "\n- " << n;
  }
  if (!r.notes.empty()) {
    out << "\n";
  }
}

nlohmann::json to_json(const RepeatReport& r) {
  nlohmann::json effects = nlohmann::json::array();
  for (const auto& e : r.effects) {
    const auto& a = e.across;
    effects.push_back({{"metric", e.metric},
                       {"term", e.term},
                       {"unit", e.unit},
                       {"relative", e.relative},
                       {"estimates", e.estimates},
                       {"runs", a.runs},
                       {"mean", a.mean},
                       {"ci", a.ci},
                       {"sd", a.sd},
                       {"weighted_mean", a.weighted_mean},
                       {"q", a.q},
                       {"birge", a.birge},
                       {"tau2", a.tau2},
                       {"scores_birge", a.scores_birge},
                       {"bound", a.bound},
                       {"alpha", a.alpha},
                       {"covers", e.this_start ? "this_start" : "machine"},
                       {"starts", e.starts},
                       {"judged", e.judged()},
                       {"honest", a.honest()}});
  }
  return {{"schema", "kvbench.repeat"},
          {"schema_version", 1},
          {"scenario", r.scenario},
          {"runs", r.runs},
          {"effects", effects},
          {"judged", r.judged},
          {"alpha", r.alpha},
          {"calibrated", r.calibrated()},
          {"notes", r.notes}};
}

}  // namespace kvbench::report
