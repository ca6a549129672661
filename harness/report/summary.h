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

#include "harness/analysis/analysis.h"
#include "harness/core/record.h"
#include "harness/report/memory.h"
#include "harness/report/prefix.h"

namespace kvbench::report {

// Median and quartiles of one metric (type-7 percentiles); n = 0 when no call had a value.
struct Quartiles {
  std::size_t n = 0;
  double q1 = 0;
  double median = 0;
  double q3 = 0;
};
Quartiles quartiles(std::vector<double> values);

struct ConditionSummary {
  std::string variant;  // empty unless the run compares server variants
  int num_ctx = 0;
  std::string cache_type;
  int prompt_tokens = 0;
  int calls = 0;   // timed calls planned and recorded
  int failed = 0;  // of those, not ok
  Quartiles ttft_ms;
  Quartiles server_prompt_ms;
  Quartiles decode_tps;
  Quartiles server_decode_tps;
  int max_cache_n = 0;
  int flagged = 0;
  // The quartiles of an analysis::metrics() key ("ttft_ms", ...); nullptr for another key.
  const Quartiles* of(std::string_view metric) const;
  Quartiles* of(std::string_view metric);
};

// Groups the fresh timed reads (analysis::fresh_timed) by (variant, num_ctx, cache_type,
// prompt_tokens), in ascending order.
std::vector<ConditionSummary> summarize_conditions(const std::vector<CallRecord>& calls);

struct CacheCheck {
  int timed_ok = 0;          // timed calls with a reported cache_n
  int matched_expected = 0;  // cache_n equal to the shared-prefix prediction
  int max_cache_n = 0;
  int prompt_cache_hits = 0;  // flagged: reuse reached past the unique first line
  int unexpected = 0;         // flagged: more reuse than the shared prefix allows
};
CacheCheck check_cache(const std::vector<CallRecord>& calls);

// One run's report: its files as read, and everything computed from them.
struct RunReport {
  nlohmann::json run;  // run.json
  std::vector<CallRecord> calls;
  std::vector<std::string> warnings;  // from reading the files
  std::vector<ConditionSummary> conditions;
  CacheCheck cache;
  analysis::Analysis analysis;  // effects, drift and validity of every metric
  MemoryAnalysis memory;
  PrefixReport prefix;
};

// Computes the report once: conditions, prompt-cache check, analysis (seeded by the scenario's
// seed, against the baseline variant), memory and prefix reuse.
RunReport build_report(nlohmann::json run, std::vector<CallRecord> calls,
                       std::vector<std::string> warnings);

// The whole report in Markdown: the run, the condition table, the prompt cache, effects,
// concurrency, memory and prefix reuse.
void write_markdown(std::ostream& out, const RunReport& report);
// The condition table, a row per condition; an empty cell where a condition has no value.
void write_conditions_csv(std::ostream& out, const RunReport& report);
// One row per call.
void write_calls_csv(std::ostream& out, const std::vector<CallRecord>& calls);
// {"conditions", "prompt_cache", "memory", "prefix_reuse", "run", "analysis"}.
nlohmann::json to_json(const RunReport& report);

}  // namespace kvbench::report
