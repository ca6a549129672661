#pragma once
// The lesson report: for every lesson figure of the labs that ran, the lesson's value beside the
// value measured here, and every shape check with its verdict, tolerance and reason; as JSON
// (lesson-report.json) and Markdown (lesson-report.md). Pure: outcomes in, JSON and text out.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/lesson/evaluate.h"
#include "harness/lesson/labs.h"

namespace kvbench::lesson {

struct LabRun {
  Lab lab;
  std::string run_dir;  // empty when the lab did not run
  double seconds = 0;   // wall time of the lab
  LabOutcome outcome;
};

struct RunInfo {
  std::string size;    // "default" or "quick"
  std::string server;  // "llama-server (managed)", ...
  std::string model;
  std::string started;  // UTC ISO time
  double seconds = 0;   // the whole reproduction
};

// The lesson's value of figure `f` (an entry of figures.json's "figures") in words.
std::string lesson_value_text(const nlohmann::json& f, const nlohmann::json& figures);

// The report as JSON: info, per lab the figures (lesson and here), checks, notes and numbers, and
// the verdict counts.
nlohmann::json report_json(const std::vector<LabRun>& labs, const RunInfo& info,
                           const nlohmann::json& figures);

// The Markdown rendering of report_json()'s result.
void write_report_markdown(std::ostream& out, const nlohmann::json& report);

// 0 when every check passed, 1 otherwise (a check failed or was inconclusive).
int report_exit_code(const nlohmann::json& report);

}  // namespace kvbench::lesson
