#pragma once
// `kvbench repeat`: one scenario's headline effects (analysis.effects[]) over N runs. Per effect,
// the mean over runs with a t interval over runs (the run-to-run component included), the Birge
// ratio of the single runs' intervals, the DerSimonian-Laird tau (the run-to-run SD a single run's
// interval leaves out) and a calibration: whether each run's interval held where the others
// landed (stats::across_runs), judged on the relative effects (the forms that travel between runs)
// at 5 % split over them. An effect in ms scales with the machine's speed, which moves between
// runs: it is not judged, and its tau says by how much it moved.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/effects.h"
#include "harness/report/table.h"
#include "harness/stats/across_runs.h"

namespace kvbench::report {

// One run as the repeat reads it: its folder and its effects.
struct RepeatRun {
  std::string dir;
  std::string scenario_hash;
  analysis::Effects effects;
  // The machine class, server build and model its starts belong to; an attached server's run.
  std::string host_class;
  std::string server;
  std::string model;
  bool attached = false;
};

struct RepeatedEffect {
  std::string metric;
  std::string term;
  std::string unit;
  bool relative = false;
  std::vector<double> estimates;  // in the runs' order, of the runs that gave it
  stats::AcrossRuns across;
  bool this_start = false;  // some run's interval covered only its own server start
  double starts = 0;        // server starts per setting it rested on, the mean over the runs
  bool judged() const { return relative; }  // only the forms that travel are calibrated
};

struct RepeatReport {
  std::string scenario;
  std::vector<std::string> runs;
  std::vector<RepeatedEffect> effects;
  std::size_t judged = 0;          // effects whose calibration is judged
  double alpha = 0.05;             // split over the judged effects
  std::vector<std::string> notes;  // effects in fewer than 2 runs, scenarios that differ
  bool calibrated() const;         // every judged effect's calibration holds
};

// Throws kvbench::Error for fewer than 2 runs.
RepeatReport repeat_report(const std::string& scenario, const std::vector<RepeatRun>& runs,
                           double alpha = 0.05);

void write_repeat_markdown(std::ostream& out, const RepeatReport& r);
nlohmann::json to_json(const RepeatReport& r);
// One row per effect, for CSV and TSV.
Table repeat_table(const RepeatReport& r);

}  // namespace kvbench::report
