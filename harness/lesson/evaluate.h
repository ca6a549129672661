#pragma once
// From one lab's run to what the lesson report shows: a measured value beside each of the
// lesson's figures for that lab, and the lab's shape checks with their verdicts. Pure: a loaded
// run's analysis (analysis::analyze_run: the same statistics `kvbench report` prints) in, numbers
// and words out.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/run_analysis.h"
#include "harness/lesson/checks.h"

namespace kvbench::lesson {

struct Check {
  std::string id;     // "ttft_rises"; figures name it in their "check"
  std::string lab;    // "prompt-length"
  std::string claim;  // the lesson's claim in words
  CheckResult result;
  // What the check's numbers cover: "machine" (the KV arithmetic, the same on every server
  // start; or timings resting on four starts or more per setting) or "this_start" (timings of
  // the lab's server starts, which another start may move).
  std::string covers;
};

struct LabOutcome {
  std::string lab;
  std::map<std::string, std::string> measured;  // figure id -> the value measured here, in words
  std::vector<Check> checks;
  std::vector<std::string> notes;  // shown, not judged (absolute speeds, validity warnings)
  nlohmann::json numbers = nlohmann::json::object();  // the values behind the words
};

// Evaluates the run of lab `lab` (an id of labs()). Throws kvbench::Error for an unknown id.
LabOutcome evaluate_lab(const std::string& lab, const analysis::RunAnalysis& run);

// Every lab's outcome when its run is missing or failed to start: each check inconclusive with
// `why`.
LabOutcome lab_not_run(const std::string& lab, const std::string& why);

// The ids and claims of a lab's checks, in report order.
std::vector<std::pair<std::string, std::string>> lab_checks(const std::string& lab);

// Part of evaluate_lab (evaluate_memory.cpp): the context-window and cache-type labs.
LabOutcome evaluate_context_window(const analysis::RunAnalysis& run);
LabOutcome evaluate_cache_type(const analysis::RunAnalysis& run);

// Adds check `id` of `out.lab` with its claim from lab_checks().
void add_check(LabOutcome& out, const std::string& id, CheckResult result);

}  // namespace kvbench::lesson
