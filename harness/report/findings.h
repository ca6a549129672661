#pragma once
// What a run found, in sentences with their numbers and intervals: the first thing its report
// says, on the terminal and at the top of report.md and report.html. Each sentence is one topic:
// what was measured, how TTFT grows with prompt length, how decoding slows with context, what the
// server settings (cache type, num_ctx, variants) and the edit position changed, what the KV cache
// took, whether every call was proven cold or reused as planned, and how far to trust it all.
// Pure: the report in, sentences out.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/summary.h"

namespace kvbench::report {

struct Finding {
  // "measured", "ttft", "decode", "settings", "edit", "memory", "proof" or "trust".
  std::string topic;
  std::string text;
};

// The run's findings: what was measured and how far to trust it first, then the others in the
// order above; a topic the run has nothing on is left out.
std::vector<Finding> findings(const RunReport& report);

// "## What was found" and a bullet per finding (the first, what was measured, as a sentence).
void write_findings_markdown(std::ostream& out, const std::vector<Finding>& found);
// report.json's "findings": [{"topic", "text"}].
nlohmann::json findings_json(const std::vector<Finding>& found);

// A number as the findings print it: 3 significant figures, no more than 1 decimal from 100 up
// and none from 1,000, thousands separated ("1,613", "598", "46.8", "0.52").
std::string finding_number(double v);

}  // namespace kvbench::report
