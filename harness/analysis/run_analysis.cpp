#include "harness/analysis/run_analysis.h"

#include "harness/analysis/lesson_figures.h"

namespace kvbench::analysis {

std::string baseline_variant(const results::RunManifest& run) {
  return run.scenario.value("gate", nlohmann::json::object()).value("baseline", "");
}

StartFacts start_facts(const results::RunManifest& run) {
  StartFacts f;
  f.one_start = run.server.is_object() && run.server.value("mode", "") == "attached";
  f.taus = run.start_tau;
  return f;
}

RunAnalysis analyze_run(results::RunManifest run, std::vector<CallRecord> calls,
                        std::vector<std::string> warnings,
                        const std::vector<results::AnswerRecord>& answers) {
  RunAnalysis r;
  r.run = std::move(run);
  r.calls = std::move(calls);
  r.warnings = std::move(warnings);
  const auto single = measured(r.calls).singles;
  r.conditions = summarize_conditions(single);
  r.cache = check_cache(single);
  r.counters = check_counters(r.run, r.calls);
  r.analysis = analyze(single, r.run.seed(), baseline_variant(r.run), start_facts(r.run));
  r.memory = analyze_memory(r.run);
  r.prefix = prefix_report(single, lesson_figures());
  if (!answers.empty()) {
    const auto a = r.run.scenario.value("answers", nlohmann::json::object());
    r.answers = analyze_answers(answers, a.value("reference", std::string("f16")));
  }
  return r;
}

}  // namespace kvbench::analysis
