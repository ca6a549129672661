// kvbench gate: the CI performance gate of results/README.md ("CI performance gate") (same-session
// variants, or a new session against a stored history).

#include "harness/cli/gate_cmd.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/cli/commands.h"
#include "harness/cli/data_files.h"
#include "harness/core/error.h"
#include "harness/gate/decision.h"
#include "harness/gate/history_gate.h"
#include "harness/gate/loop.h"
#include "harness/local/local_run.h"
#include "harness/process/signals.h"
#include "harness/results/results.h"
#include "harness/run/runner.h"
#include "harness/session/run_inputs.h"

namespace kvbench::cli {

void apply_overrides(scenario::GateConfig& config, const GateCliOptions& o) {
  for (const auto& m : o.margins) {
    const auto eq = m.find('=');
    char* end = nullptr;
    const double value = eq == std::string::npos ? 0.0 : std::strtod(m.c_str() + eq + 1, &end);
    if (eq == std::string::npos || end == nullptr || *end != '\0' ||
        !(value > 0.0 && value < 1.0)) {
      throw InputError(
          fmt::format("--margin {}: expected METRIC=FRACTION, e.g. decode_tps=0.05", m));
    }
    const std::string metric = m.substr(0, eq);
    bool found = false;
    for (auto& gm : config.metrics) {
      if (gm.metric == metric) {
        gm.margin = value;
        found = true;
      }
    }
    if (!found) {
      config.metrics.push_back({metric, value, {}});
    }
  }
  if (o.alpha != 0.0) {
    if (!(o.alpha > 0.0 && o.alpha < 0.5)) {
      throw InputError(fmt::format("--alpha {}: expected a level in (0, 0.5)", o.alpha));
    }
    config.alpha = o.alpha;
  }
  if (!o.on_inconclusive.empty()) {
    config.inconclusive_fails = o.on_inconclusive == "fail";
  }
}

namespace {

std::filesystem::path output_path(const std::string& given, const std::filesystem::path& dir,
                                  const char* name) {
  return given.empty() ? dir / name : std::filesystem::path(given);
}

void write_file(const std::filesystem::path& path, const std::string& text, bool append) {
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!out || !(out << text)) {
    throw InputError(fmt::format("cannot write {}", path.string()));
  }
}

}  // namespace

int publish(const gate::GateReport& report, const std::filesystem::path& dir,
            const GateCliOptions& o) {
  std::ostringstream md;
  gate::write_markdown(md, report);
  const std::string json = gate::report_json(report).dump(2) + "\n";
  if (o.format == "md") {
    std::cout << md.str();
  } else if (o.format == "json") {
    std::cout << json;
  } else {
    gate::write_lines(std::cout, report);
  }
  std::ostringstream junit;
  gate::write_junit(junit, report);
  write_file(output_path(o.markdown, dir, "gate.md"), md.str(), false);
  write_file(output_path(o.junit, dir, "gate.junit.xml"), junit.str(), false);
  write_file(output_path(o.json, dir, "gate.json"), json, false);
  if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary) {
    write_file(summary, md.str(), true);
  }
  fmt::print(stderr, "gate outputs: {}\n", output_path(o.markdown, dir, "gate.md").string());
  return gate::exit_code(report.overall, report.inconclusive_fails);
}

namespace {

nlohmann::json run_validity(const gate::RunInputs& in, const std::string& baseline) {
  const auto a =
      analysis::analyze(analysis::measured(in.loaded.calls).singles, in.scenario.seed, baseline);
  nlohmann::json models = nlohmann::json::object();
  for (const auto& m : a.models) {
    models[m.metric] = m.validity;
  }
  nlohmann::json out = {{"validity", models}, {"warnings", in.loaded.warnings}};
  if (a.verdict.present) {
    out["verdict"] = a.verdict;
  }
  return out;
}

gate::GateReport interleaved_report(const gate::LoopResult& r, const gate::RunInputs& in,
                                    const scenario::GateConfig& config, int looks) {
  gate::GateReport report;
  report.title = "kvbench gate: " + in.scenario.name;
  report.mode = "interleaved";
  report.rows = gate::report_rows(r.gate);
  report.overall = r.gate.overall;
  report.inconclusive_fails = config.inconclusive_fails;
  report.notes.push_back(fmt::format(
      "run {} ({}): {} block set(s), {} added by the gate; one-sided α={} per test, spent over "
      "up to {} look(s) ({:.4g} at each: every look may decide, so each gets its share), Holm "
      "across {} tests",
      in.session.run_id, in.dir.string(), r.sets, r.extensions, config.alpha, looks,
      config.alpha / looks, r.gate.entries.size()));
  for (const auto& e : r.gate.entries) {
    if (e.verdict != stats::Verdict::inconclusive || !e.result || !e.reason.empty()) {
      continue;
    }
    const auto need = gate::sets_to_decide(*e.result, r.sets);
    report.notes.push_back(
        need ? fmt::format("{} {} vs {}: still undecided after {} set(s); if its estimate held, "
                           "about {} sets in all would decide it (`kvbench run --extend {} "
                           "--sets {}`, then `kvbench gate --run {}`)",
                           e.metric, e.candidate, r.gate.baseline, r.sets, *need, in.dir.string(),
                           *need - r.sets, in.dir.string())
             : fmt::format("{} {} vs {}: its estimate sits on the margin, where no number of "
                           "sets decides it",
                           e.metric, e.candidate, r.gate.baseline));
  }
  report.details = {{"run_dir", in.dir.string()},
                    {"run_id", in.session.run_id},
                    {"sets", r.sets},
                    {"extensions", r.extensions},
                    {"max_sets", config.max_sets},
                    {"looks", looks},
                    {"alpha", config.alpha},
                    {"alpha_per_look", config.alpha / looks},
                    {"gate", r.gate},
                    {"run_validity", run_validity(in, r.gate.baseline)}};
  return report;
}

int gate_interleaved(const std::filesystem::path& dir, const GateCliOptions& o, bool may_extend,
                     const run::RunOptions& ro) {
  auto in = gate::load_run_inputs(dir);
  auto config = in.scenario.gate;
  apply_overrides(config, o);
  const int max_sets = may_extend ? std::max(config.max_sets, in.sets) : in.sets;
  const int looks = gate::planned_looks(in.sets, max_sets);
  const scenario::GateConfig per_look = gate::spend_alpha(config, looks);
  const auto gate_now = [&] {
    return gate::gate_run(in.loaded.calls, per_look, in.variants, in.scenario.seed);
  };
  const auto extend = [&] {
    local::extend_run(dir, 1, ro);
    in = gate::load_run_inputs(dir);
  };
  const auto r = gate::gate_until_decided(in.sets, max_sets, gate_now, extend);
  return publish(interleaved_report(r, in, config, looks), dir, o);
}

}  // namespace

void setup_gate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<GateCliOptions>();
  auto* cmd = app.add_subcommand(
      "gate", "Gate a change: run a scenario with server variants (or take a run) and judge it");
  cmd->add_option("scenario", o->scenario, "Scenario with \"variants\" (and a \"gate\" section)");
  cmd->add_option("--run", o->run_dir, "Gate this existing run folder; runs nothing");
  cmd->add_option("--baseline", o->baseline,
                  "Baseline run folder (separate sessions; needs --history)");
  cmd->add_option("--candidate", o->candidate, "Candidate run folder (with --baseline)");
  cmd->add_option("--history", o->history,
                  "History to gate against: a SQLite file or a postgresql:// URL (kvbench ingest)");
  cmd->add_flag("--any-host", o->any_host,
                "With --history: compare with sessions of every host class, not only the run's");
  add_server_options(cmd, o->server, "Folder the run folder is created in");
  cmd->add_option("--margin", o->margins, "METRIC=FRACTION, e.g. decode_tps=0.05 (repeatable)");
  cmd->add_option("--alpha", o->alpha, "One-sided level of each test (default: the scenario's)");
  cmd->add_option("--on-inconclusive", o->on_inconclusive, "fail (exit 3) or warn (exit 0)")
      ->check(CLI::IsMember({"fail", "warn"}));
  cmd->add_option("--junit", o->junit, "JUnit XML path (default: RUN/gate.junit.xml)");
  cmd->add_option("--json", o->json, "JSON path (default: RUN/gate.json)");
  cmd->add_option("--markdown", o->markdown, "Markdown path (default: RUN/gate.md)");
  cmd->add_option("--format", o->format,
                  "What stdout carries: text (a line per row), md or json (the verdict files are "
                  "written either way)")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"text", "md", "json"}))
      ->capture_default_str()
      ->group("Output");
  cmd->callback([o, &exit_code] {
    if (o->server.models.size() > 1) {
      throw InputError(fmt::format(
          "kvbench gate: --model given {} times: the gate compares its scenario's variants (name "
          "a model in each); `kvbench run --model A --model B` puts models side by side",
          o->server.models.size()));
    }
    const run::RunOptions ro = to_run_options(o->server);
    if (!o->baseline.empty() || !o->candidate.empty()) {
      if (o->baseline.empty() || o->candidate.empty() || o->history.empty()) {
        throw InputError(
            "kvbench gate --baseline/--candidate: two separate sessions differ by more than their "
            "own standard errors show; give --history DB (kvbench history add) to size the "
            "session-to-session spread, or gate interleaved variants in one run (\"variants\")");
      }
      exit_code = gate_against_history(*o);
      return;
    }
    if (!o->history.empty()) {
      if (o->run_dir.empty()) {
        throw InputError("kvbench gate --history DB: give the new run with --run RUN_DIR");
      }
      exit_code = gate_against_history(*o);
      return;
    }
    if (!o->run_dir.empty()) {
      exit_code = gate_interleaved(o->run_dir, *o, false, ro);
      return;
    }
    if (o->scenario.empty()) {
      throw InputError("kvbench gate: give a scenario file, or --run RUN_DIR");
    }
    const auto s = run::with_overrides(scenario::load_scenario(scenario_argument(o->scenario)), ro);
    if (s.variants.size() < 2) {
      throw InputError(o->scenario +
                       ": variants: the gate needs at least two server variants to compare");
    }
    results::check_writable_folder(ro.results_root, "--results");
    process::install_signal_handlers();
    const auto summary = local::run_scenario(s, ro);
    if (!summary.complete) {
      throw Error(fmt::format("{}: the run is incomplete; no verdict", summary.run_dir.string()));
    }
    exit_code = gate_interleaved(summary.run_dir, *o, true, ro);
  });
}

}  // namespace kvbench::cli
