#pragma once
// `kvbench compare RUN_A RUN_B`: a descriptive side-by-side of two runs. Per condition both runs
// measured (variant, num_ctx, cache type, prompt length) and per metric: each run's median of its
// fresh timed calls, and B's median over A's with a 95 % bootstrap interval (each run's calls
// resampled on their own, the ratio of the medians). Beside it, what differs between the two
// runs: kvbench, the server, the model, the machine, the scenario, the labels. It is a
// description, not a test: two runs on two days differ by more than their calls' spread, and
// nothing here says whether a difference is the server's or the day's (the gate is the test).

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/table.h"
#include "harness/results/results.h"
#include "harness/stats/descriptive.h"

namespace kvbench::report {

struct CompareRow {
  std::string variant;
  int num_ctx = 0;
  std::string cache_type;
  int prompt_tokens = 0;
  std::string metric;  // analysis::metrics() key
  std::string label;   // "TTFT"
  std::string unit;    // "ms"
  std::size_t n_a = 0, n_b = 0;
  double median_a = 0, median_b = 0;
  std::optional<double> ratio;  // median_b / median_a; none when median_a is 0
  std::optional<stats::Interval> ratio_ci;
};

struct Comparison {
  std::string a, b;  // the run folders as given
  std::string a_run_id, b_run_id;
  std::vector<std::string> differences;  // "server version: X (A) against Y (B)", ...
  std::vector<CompareRow> rows;
  std::vector<std::string> only_in_a, only_in_b;  // conditions one run has and the other not
};

// Compares two loaded runs (`a_dir`, `b_dir` name them in the output). The bootstrap is seeded,
// so the same two runs always give the same intervals.
Comparison compare_runs(const results::LoadedRun& a, const std::string& a_dir,
                        const results::LoadedRun& b, const std::string& b_dir);

// Markdown compact enough for a pull-request comment.
void write_compare_markdown(std::ostream& out, const Comparison& c);
nlohmann::json to_json(const Comparison& c);
// One row per condition and metric, for CSV and TSV: medians, counts, B / A and its interval.
Table compare_table(const Comparison& c);

}  // namespace kvbench::report
