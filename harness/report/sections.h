#pragma once
// Sections of a run's report that summary.cpp puts together, each printed in a file of its own.

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/counters.h"
#include "harness/analysis/effects.h"
#include "harness/report/summary.h"

namespace kvbench::report {

// The condition table in Markdown, and as report.json's "conditions".
void write_conditions_markdown(std::ostream& out, const std::vector<ConditionSummary>& rows);
nlohmann::json conditions_json(const std::vector<ConditionSummary>& rows);

// "Does the cache type change the answers?", where the run asked for answers.
void write_answers_markdown(std::ostream& out, const RunReport& report);

// The server's counters beside the calls: one sentence per counter, and report.json's form.
void write_counters_markdown(std::ostream& out, const std::vector<analysis::CounterCheck>& checks);
nlohmann::json counters_json(const std::vector<analysis::CounterCheck>& checks);

// Each condition's metrics (median with its CI, mean, CV, ...), inside the Effects section.
void write_descriptive_markdown(std::ostream& out, const analysis::Analysis& a);

// The effects at the level of their units (analysis/effects.h), inside the Effects section.
void write_unit_effects_markdown(std::ostream& out, const analysis::Effects& effects,
                                 const analysis::EffectsVerdict& verdict);

}  // namespace kvbench::report
