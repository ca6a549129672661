#pragma once
// What a gate tells CI: one line per gated metric, a Markdown summary, JUnit XML and JSON. The
// same-session gate and the history gate both render through GateReport. Pure: streams in.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gate/decision.h"

namespace kvbench::gate {

struct ReportRow {
  std::string metric;      // "decode_tps"
  std::string condition;   // "all calls", "cache_type=q8_0"
  std::string comparison;  // "fast vs base", "run 1a2b vs history"
  stats::Verdict verdict = stats::Verdict::inconclusive;
  std::string numbers;  // effect, interval, margin, n, df, level: one line
  std::string reason;   // why INCONCLUSIVE (or the caveat of a FAIL); may be empty
};

struct GateReport {
  std::string title;  // "kvbench gate: <scenario>"
  std::string mode;   // "interleaved" | "history" | "sessions"
  std::vector<ReportRow> rows;
  stats::Verdict overall = stats::Verdict::inconclusive;
  bool inconclusive_fails = true;
  std::vector<std::string> notes;  // extra lines under the table (sets run, validity, ...)
  nlohmann::json details;          // the complete numbers, written into the JSON
};

// Rows of a same-session gate; `change` and slowdown bounds are in percent.
std::vector<ReportRow> report_rows(const RunGate& g);

// 0 PASS; 1 FAIL; INCONCLUSIVE: 3 when inconclusive_fails, else 0.
int exit_code(stats::Verdict overall, bool inconclusive_fails);

// "PASS decode_tps fast vs base (all calls): ..." per row, then "gate: <overall>".
void write_lines(std::ostream& out, const GateReport& r);
void write_markdown(std::ostream& out, const GateReport& r);
// One testcase per row: <failure> for FAIL, for INCONCLUSIVE a <failure> when it fails the gate,
// else <skipped>; messages carry the numbers.
void write_junit(std::ostream& out, const GateReport& r);
nlohmann::json report_json(const GateReport& r);

}  // namespace kvbench::gate
