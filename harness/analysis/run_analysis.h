#pragma once
// One run analysed once from its files: everything the report, the lesson's labs and the
// commands read of a run, computed from one sorting of its calls (measured): the conditions, the
// prompt-cache check, the server's counters, the models, memory, prefix reuse and the answers.
// The printers (report/) compute nothing again.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/analysis.h"
#include "harness/analysis/answers.h"
#include "harness/analysis/conditions.h"
#include "harness/analysis/counters.h"
#include "harness/analysis/memory.h"
#include "harness/analysis/prefix.h"
#include "harness/core/record.h"
#include "harness/results/manifest.h"

namespace kvbench::analysis {

struct RunAnalysis {
  results::RunManifest run;  // run.json
  std::vector<CallRecord> calls;
  std::vector<std::string> warnings;  // from reading the files
  std::vector<ConditionSummary> conditions;
  CacheCheck cache;
  std::vector<CounterCheck> counters;  // the server's /metrics beside the calls
  Analysis analysis;                   // effects, drift and validity of every metric
  MemoryAnalysis memory;
  PrefixReport prefix;
  AnswersReport answers;  // scenario "answers": the cache types' greedy answers
};

// The reference variant of a run's comparison (run.json's scenario gate.baseline); empty when
// the run has no variants.
std::string baseline_variant(const results::RunManifest& run);
// What run.json says of the run's server starts: an attached server is one start; the
// start-to-start components the run was given (start_tau).
StartFacts start_facts(const results::RunManifest& run);

// Analyses a run's files once: the single prompts of measured(calls) for the conditions, the
// cache check, the models (seeded by the scenario's seed, against its baseline variant) and
// prefix reuse against the lesson's figures; every call for the counters; answers.jsonl's lines
// for the answers.
RunAnalysis analyze_run(results::RunManifest run, std::vector<CallRecord> calls,
                        std::vector<std::string> warnings,
                        const std::vector<results::AnswerRecord>& answers = {});

}  // namespace kvbench::analysis
