#include "harness/report/summary.h"

#include <algorithm>
#include <functional>
#include <span>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/analysis/analysis.h"
#include "harness/core/call_fields.h"
#include "harness/core/error.h"
#include "harness/report/concurrency.h"
#include "harness/report/effects.h"
#include "harness/report/findings.h"
#include "harness/report/html.h"
#include "harness/report/memory.h"
#include "harness/report/prefix.h"
#include "harness/report/sections.h"
#include "harness/results/record_parts.h"
#include "harness/stats/descriptive.h"

namespace kvbench::report {

using nlohmann::json;

std::vector<std::string> shortfalls(const RunReport& report) {
  std::vector<std::string> out;
  for (const auto& b : report.run.blocks) {
    if (b.error) {
      out.push_back(fmt::format("block {} (num_ctx {}, {}{}) never started: {}", b.index, b.num_ctx,
                                b.cache_type, b.variant.empty() ? "" : ", " + b.variant, *b.error));
    }
  }
  int timed = 0;
  int failed = 0;
  for (const auto& r : report.calls) {
    if (r.kind == CallKind::timed && r.outcome != Outcome::aborted) {  // aborted: interrupted
      ++timed;
      failed += r.ok() ? 0 : 1;
    }
  }
  if (timed > 0 && failed == timed) {
    out.push_back(fmt::format("all {} timed calls failed: nothing was measured", timed));
  } else if (timed > 0 && static_cast<double>(failed) > 0.10 * timed) {
    out.push_back(
        fmt::format("{} of {} timed calls failed ({:.0f} %, more than the 10 % the "
                    "validity rules allow)",
                    failed, timed, 100.0 * failed / timed));
  } else if (timed == 0 && !report.calls.empty()) {
    out.push_back("no timed call was recorded: nothing was measured");
  }
  return out;
}

RunReport build_report(results::RunManifest run, std::vector<CallRecord> calls,
                       std::vector<std::string> warnings,
                       const std::vector<results::AnswerRecord>& answers) {
  RunReport r{analysis::analyze_run(std::move(run), std::move(calls), std::move(warnings), answers),
              {},
              {}};
  r.scenario = scenario::recorded_scenario(r.run.scenario);
  r.workload = workload_section(r.scenario, r.run, r.calls);
  return r;
}

std::string run_name(const RunReport& report) {
  return report.scenario.name.empty() ? "?" : report.scenario.name;
}

namespace {

// The header lines: the run, its server, model and machine, its calls, and what it fell short of.
void write_run_header(std::ostream& out, const RunReport& report) {
  const results::RunManifest& run = report.run;
  const auto& calls = report.calls;
  const auto or_unknown = [](const std::string& s) { return s.empty() ? std::string("?") : s; };
  out << "\n## The run\n\n";
  out << fmt::format("- run id `{}`, {} ({} to {})\n", or_unknown(run.run_id),
                     or_unknown(run.status), or_unknown(run.started), or_unknown(run.finished));
  const json server = run.server.is_object() ? run.server : json::object();
  std::string version = server.value("version", "");
  version = version.substr(0, version.find('\n'));
  out << fmt::format("- server: {} ({}){}\n", server.value("kind", "?"), server.value("mode", "?"),
                     version.empty() ? "" : ", " + version);
  const json model = run.model.is_object() ? run.model : json::object();
  out << fmt::format("- model: {}\n", model.value("name", model.value("path", "?")));
  // What was found before the server started (a num_ctx beyond the trained context).
  if (model.contains("warnings") && model["warnings"].is_array()) {
    for (const auto& w : model["warnings"]) {
      out << fmt::format("- model: warning: {}\n", w.is_string() ? w.get<std::string>() : w.dump());
    }
  }
  if (run.machine) {
    out << fmt::format("- machine: {}, {} logical cores\n", run.machine->cpu_model,
                       run.machine->logical_cores);
  }
  if (!run.labels.empty()) {
    std::vector<std::string> items;
    for (const auto& [name, value] : run.labels) {
      items.push_back(name + "=" + value);
    }
    out << fmt::format("- labels: {}\n", fmt::join(items, ", "));
  }
  std::vector<std::string> machine_warnings;
  for (const auto& b : run.blocks) {
    if (!b.machine_state) {
      continue;
    }
    for (const auto& w : b.machine_state->warnings) {
      if (std::find(machine_warnings.begin(), machine_warnings.end(), w) ==
          machine_warnings.end()) {
        machine_warnings.push_back(w);
      }
    }
  }
  for (const auto& w : machine_warnings) {
    out << "- machine: " << w << "\n";
  }
  int failed = 0;
  int flagged = 0;
  int aborted = 0;
  for (const auto& r : calls) {
    aborted += r.outcome == Outcome::aborted ? 1 : 0;
    failed += r.ok() || r.outcome == Outcome::aborted ? 0 : 1;
    flagged += r.flags.empty() ? 0 : 1;
  }
  out << fmt::format("- calls: {} recorded, {} failed, {} flagged\n", calls.size(), failed,
                     flagged);
  if (aborted > 0) {
    out << fmt::format(
        "- interrupted: {} {} cut off in flight (recorded as aborted); `kvbench run --resume "
        "RUN_DIR` repeats {} and runs the rest of the plan\n",
        aborted, aborted == 1 ? "call was" : "calls were", aborted == 1 ? "it" : "them");
  }
  for (const auto& why : shortfalls(report)) {
    out << "- short of the plan: " << why << "\n";
  }
  for (const auto& w : report.warnings) {
    out << "- warning: " << w << "\n";
  }
  if (run.precision) {
    const results::PrecisionStatus& p = run.precision->last;
    const std::string achieved = p.half_width
                                     ? fmt::format("±{:.1f} %", 100 * *p.half_width)
                                     : "not estimable" + (p.why ? " (" + *p.why + ")" : "");
    out << fmt::format(
        "- precision: {} of {} {} after {} set{} and {} calls, target ±{:.1f} % "
        "within {} calls: {}\n",
        p.effect, p.metric, achieved, p.sets, p.sets == 1 ? "" : "s", p.calls,
        100 * p.target_half_width, p.max_calls, p.status);
  }
}

// Whether the prompt cache did as predicted over the timed calls, and the rule of the prediction.
void write_prompt_cache_markdown(std::ostream& out, const RunReport& report) {
  const json server = report.run.server.is_object() ? report.run.server : json::object();
  const auto& cc = report.cache;
  if (cc.timed_ok == 0) {
    out << "\nPrompt cache: the server reported no reused-token count (cache_n) for any timed "
           "call, so reuse cannot be checked; the unique first lines still keep every prompt "
           "fresh.\n";
  } else if (cc.predicted == 0) {
    // Reported reuse without token ids (hosted APIs, newer Ollama): no prediction to match.
    out << fmt::format(
        "\nPrompt cache: the server reported its reused tokens on {} timed calls (at most {}); "
        "{} read past their unique first line from the cache. The server gives no token ids, "
        "so no call's reuse was predicted (a server.cache_rule with the provider's minimum "
        "predicts the fresh reads).\n",
        cc.timed_ok, cc.max_cache_n, cc.prompt_cache_hits);
  } else {
    out << fmt::format(
        "\nPrompt cache: {} of {} timed calls reused exactly the tokens their start shares with "
        "the previous prompt (at most {}); {} read past their unique first line from the cache; "
        "{} reused more than predicted.",
        cc.matched_expected, cc.predicted, cc.max_cache_n, cc.prompt_cache_hits, cc.unexpected);
    if (cc.predicted < cc.timed_ok) {
      out << fmt::format(
          " {} more reported their reuse without a prediction: the server gives no token ids, "
          "so only a fresh read's (none) is predicted.",
          cc.timed_ok - cc.predicted);
    }
    out << "\n";
  }
  if (const auto rule = server.find("cache_rule"); rule != server.end() && rule->is_object()) {
    const int least = rule->value("min_tokens", 0);
    const int step = rule->value("step", 1);
    std::string words;
    if (least > 0) {
      words = fmt::format("nothing below {} tokens", least);
    }
    if (step > 1) {
      words += fmt::format("{}whole steps of {} tokens", least > 0 ? ", then " : "", step);
    }
    out << "The predictions follow the server's caching rule (server.cache_rule): " << words
        << ".\n";
  }
}

// A section of the report: its key in report.json, whether the run has it there, and its
// Markdown and JSON printers (either may be absent: the prompt cache is printed with the
// conditions, the run is only in the JSON, concurrency only in the Markdown, from run.json).
struct Section {
  std::string_view key;
  bool (*present)(const RunReport&);
  void (*markdown)(std::ostream&, const RunReport&);
  json (*to_json)(const RunReport&);
};

bool always(const RunReport& /*report*/) {
  return true;
}

json prompt_cache_json(const RunReport& report) {
  const auto& cache = report.cache;
  return {{"timed_ok", cache.timed_ok},
          {"predicted", cache.predicted},
          {"matched_expected", cache.matched_expected},
          {"max_cache_n", cache.max_cache_n},
          {"prompt_cache_hits", cache.prompt_cache_hits},
          {"unexpected", cache.unexpected}};
}

using R = const RunReport&;

const Section kSections[] = {
    {"conditions", always,
     [](std::ostream& out, R r) {
       out << "\nMedian [IQR] over the timed calls of each condition.\n\n";
       write_conditions_markdown(out, r.conditions);
       write_prompt_cache_markdown(out, r);
     },
     [](R r) { return conditions_json(r.conditions); }},
    {"findings", always,
     [](std::ostream& out, R r) {
       out << fmt::format("# kvbench run: {}\n\n", run_name(r));
       write_findings_markdown(out, findings(r));
     },
     [](R r) { return findings_json(findings(r)); }},
    {"run_header", always, write_run_header, nullptr},
    {"prompt_cache", always, nullptr, prompt_cache_json},
    {"server_counters", always,
     [](std::ostream& out, R r) { write_counters_markdown(out, r.counters); },
     [](R r) { return counters_json(r.counters); }},
    {"analysis", always, [](std::ostream& out, R r) { write_effects_markdown(out, r.analysis); },
     [](R r) { return json(r.analysis); }},
    {"concurrency", always, [](std::ostream& out, R r) { write_concurrency_markdown(out, r.run); },
     nullptr},
    {"memory", always, [](std::ostream& out, R r) { write_memory_markdown(out, r.memory); },
     [](R r) { return memory_json(r.memory); }},
    {"prefix_reuse", always, [](std::ostream& out, R r) { write_prefix_markdown(out, r.prefix); },
     [](R r) { return prefix_to_json(r.prefix); }},
    {"answers", [](R r) { return r.answers.present; }, write_answers_markdown,
     [](R r) { return r.answers.to_json(); }},
    {"workload", [](R r) { return r.workload.present; },
     [](std::ostream& out, R r) { out << r.workload.markdown; },
     [](R r) { return r.workload.json; }},
    {"run", always, nullptr, [](R r) { return json(r.run); }},
};

const Section& section(std::string_view key) {
  for (const auto& s : kSections) {
    if (s.key == key) {
      return s;
    }
  }
  throw Error(fmt::format("the report has no section '{}'", key));
}

// The Markdown's sections after its header, in order: of a run with single prompts, and of a run
// of conversations only. Each section prints nothing where the run has nothing of it.
constexpr std::string_view kLayout[] = {"findings", "conditions",  "run_header", "server_counters",
                                        "analysis", "concurrency", "memory",     "prefix_reuse",
                                        "answers",  "workload"};
constexpr std::string_view kConversationLayout[] = {"findings", "run_header", "server_counters",
                                                    "workload", "memory"};

// Whether the run timed single prompts (not only a workload's turns or requests).
bool has_single_prompts(const RunReport& report) {
  return std::any_of(report.calls.begin(), report.calls.end(),
                     [](const auto& c) { return !c.by_workload() && c.kind == CallKind::timed; });
}

}  // namespace

void write_markdown(std::ostream& out, const RunReport& report) {
  const bool singles = has_single_prompts(report);
  const bool conversations_only = !singles && report.workload.present;
  using Layout = std::span<const std::string_view>;
  for (const auto key : conversations_only ? Layout(kConversationLayout) : Layout(kLayout)) {
    section(key).markdown(out, report);
  }
}

void write_brief_markdown(std::ostream& out, const RunReport& report) {
  out << fmt::format("What kvbench found ({}):\n", run_name(report));
  for (const auto& f : findings(report)) {
    out << "- " << f.text << "\n";
  }
  const bool singles = has_single_prompts(report);
  if (singles) {
    section("conditions").markdown(out, report);
  }
}

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> kFormats{"md", "json", "csv", "tsv", "jsonl", "html"};
  return kFormats;
}

void write_report(std::ostream& out, const RunReport& report, std::string_view format) {
  if (format == "md") {
    write_markdown(out, report);
  } else if (format == "json") {
    out << to_json(report).dump(2) << "\n";
  } else if (format == "csv" || format == "tsv") {
    conditions_table(report).write(out, format);
  } else if (format == "html") {
    std::ostringstream md;
    write_markdown(md, report);
    write_html(out, report, md.str());
  } else if (format == "jsonl") {
    for (const auto& c : report.calls) {
      out << kvbench::to_json(c).dump() << "\n";
    }
  } else {
    throw Error(fmt::format("a report has no format '{}'", format));
  }
}

void write_calls_csv(std::ostream& out, const std::vector<CallRecord>& calls) {
  const auto fields = results::call_columns(calls);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out << (i == 0 ? "" : ",") << fields[i].name;
  }
  out << "\n";
  for (const auto& r : calls) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      out << (i == 0 ? "" : ",") << csv_text(fields[i].get(r));
    }
    out << "\n";
  }
}

json to_json(const RunReport& report) {
  json out = {{"schema", "kvbench.report"}, {"schema_version", 1}};
  for (const auto& s : kSections) {
    if (s.to_json != nullptr && s.present(report)) {
      // A workload's section is keyed by the workload's name.
      out[s.key == "workload" ? report.workload.key : std::string(s.key)] = s.to_json(report);
    }
  }
  return out;
}

}  // namespace kvbench::report
