#pragma once
// What `kvbench run` leaves beside a finished run, shared with the commands that run scenarios.

#include <filesystem>
#include <vector>

#include "harness/cli/output.h"
#include "harness/report/summary.h"

namespace kvbench::cli {

// Writes report.md, report.html and summary.json into `run_dir` (each replaced whole), then
// `targets` (the run report in their formats; none: nothing more; `brief`: Markdown is what was
// found and the condition table, report::write_brief_markdown), and returns the report.
report::RunReport write_run_report(const std::filesystem::path& run_dir,
                                   const std::vector<OutputTarget>& targets, bool brief = false);

}  // namespace kvbench::cli
