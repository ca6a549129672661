#pragma once
// The report of one run, computed once from its files (RunReport), and its printers: Markdown,
// CSV and JSON, the condition table in each from one column schema. Pure: records in, text out;
// printers write to the stream they are handed and compute nothing again.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/run_analysis.h"
#include "harness/core/record.h"
#include "harness/report/table.h"
#include "harness/report/workload_section.h"
#include "harness/results/manifest.h"

namespace kvbench::report {

using analysis::CacheCheck;
using analysis::ConditionSummary;
using analysis::Quartiles;

// One run's report: the run's analysis (computed once, analysis/run_analysis.h) and its
// workload's section (a conversation's turns, which the analysis leaves out).
struct RunReport : analysis::RunAnalysis {
  // The run's scenario as run.json records it, typed (scenario::recorded_scenario).
  scenario::Scenario scenario;
  WorkloadSection workload;
};

// The run's scenario's name ("?" where it recorded none).
std::string run_name(const RunReport& report);

// Computes the report once: the run's analysis (analysis::analyze_run) and its workload's section.
RunReport build_report(results::RunManifest run, std::vector<CallRecord> calls,
                       std::vector<std::string> warnings,
                       const std::vector<results::AnswerRecord>& answers = {});

// Why a finished run did not measure what it planned, one sentence each (empty: nothing to say):
// a block whose server never started, failed timed calls above the validity limit (10 %), or no
// timed call that succeeded. `kvbench run` exits 3 when there is one; the report lists them.
std::vector<std::string> shortfalls(const RunReport& report);

// The whole report in Markdown: what was found, the condition table and the prompt cache, the
// run, effects, concurrency, memory, prefix reuse, answers and the workload's section.
void write_markdown(std::ostream& out, const RunReport& report);
// What `kvbench run` shows on the terminal without --detail: what was found and the condition
// table with the prompt cache (a run of conversations only: what was found).
void write_brief_markdown(std::ostream& out, const RunReport& report);
// The condition table, a row per condition; an empty cell where a condition has no value.
// The formats a run's report is written in: md (the report), json (its summary, kvbench.report),
// csv and tsv (the per-condition table), jsonl (one record per call), html (the page, html.h).
const std::vector<std::string>& report_formats();
// Writes `report` in one of report_formats(); throws kvbench::Error for another.
void write_report(std::ostream& out, const RunReport& report, std::string_view format);

// The per-condition table (one row per condition; a metric as its median, q1 and q3), as CSV by
// write_conditions_csv and in any format by the table.
Table conditions_table(const RunReport& report);
void write_conditions_csv(std::ostream& out, const RunReport& report);
// One row per call.
void write_calls_csv(std::ostream& out, const std::vector<CallRecord>& calls);
// {"findings", "conditions", "prompt_cache", "memory", "prefix_reuse", "run", "analysis", ...}.
nlohmann::json to_json(const RunReport& report);

}  // namespace kvbench::report
