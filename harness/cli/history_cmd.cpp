// kvbench history add/list/show, and the separate-session gate against a history.

#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/gate_cmd.h"
#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/gate/decision.h"
#include "harness/gate/history.h"
#include "harness/gate/history_gate.h"
#include "harness/gate/run_inputs.h"
#include "harness/report/table.h"

namespace kvbench::cli {

namespace {

double margin_of(const scenario::GateConfig& config, const gate::SessionValue& v) {
  for (const auto& gm : config.metrics) {
    if (gm.metric == v.metric && gm.where == v.where) {
      return gm.margin;
    }
  }
  return 0.0;
}

const gate::SessionValue* find_value(const std::vector<gate::SessionValue>& values,
                                     const gate::SessionValue& like) {
  for (const auto& v : values) {
    if (v.metric == like.metric && v.where == like.where && v.variant == like.variant) {
      return &v;
    }
  }
  return nullptr;
}

std::vector<gate::HistoryEntry> judge(const gate::HistoryDb& db, const gate::RunInputs& run,
                                      const gate::RunInputs* baseline,
                                      const scenario::GateConfig& config) {
  const auto values = gate::session_values(run.loaded.calls, config, run.scenario.seed);
  const auto base_values =
      baseline == nullptr
          ? std::vector<gate::SessionValue>{}
          : gate::session_values(baseline->loaded.calls, config, baseline->scenario.seed);
  std::vector<gate::HistoryEntry> entries;
  for (const auto& v : values) {
    const auto history =
        db.recent(run.session.scenario_hash, v.metric, gate::condition_label(v.where), v.variant,
                  gate::kHistoryLimit, run.session.run_id);
    const double margin = margin_of(config, v);
    if (baseline == nullptr) {
      entries.push_back(gate::history_entry(v, history, margin));
      continue;
    }
    const auto* b = find_value(base_values, v);
    if (b == nullptr) {
      throw InputError(fmt::format("{}: no {} ({}) to compare with", baseline->dir.string(),
                                   v.metric, gate::condition_label(v.where)));
    }
    entries.push_back(gate::compare_sessions(*b, v, history, margin));
  }
  return entries;
}

}  // namespace

int gate_against_history(const GateCliOptions& o) {
  const bool pair = !o.baseline.empty();
  const auto run = gate::load_run_inputs(pair ? o.candidate : o.run_dir);
  gate::HistoryDb db(o.history, false);
  if (db.sessions() == 0) {
    throw InputError(fmt::format(
        "{}: the history is empty: store accepted runs first with kvbench history add {} RUN_DIR",
        o.history, o.history));
  }
  auto config = run.scenario.gate;
  apply_overrides(config, o);
  std::optional<gate::RunInputs> base;
  if (pair) {
    base = gate::load_run_inputs(o.baseline);
    if (base->session.scenario_hash != run.session.scenario_hash) {
      throw InputError(fmt::format("{} and {} ran different scenarios ({} vs {})", o.baseline,
                                   o.candidate, base->session.scenario_hash,
                                   run.session.scenario_hash));
    }
  }
  const auto entries = judge(db, run, base ? &*base : nullptr, config);
  gate::GateReport report;
  report.title = "kvbench gate: " + run.scenario.name + (pair ? " (two sessions)" : " (history)");
  report.mode = pair ? "sessions" : "history";
  report.rows = gate::history_rows(
      entries, pair ? fmt::format("run {} vs run {}", run.session.run_id, base->session.run_id)
                    : fmt::format("run {} vs history", run.session.run_id));
  report.overall = stats::overall_verdict(entries);
  report.inconclusive_fails = config.inconclusive_fails;
  report.notes.push_back(fmt::format(
      "session values: fitted at the reference point (t = 0); history {} (scenario {}, the last "
      "{} sessions at most, {} needed), prediction interval q = {}",
      o.history, run.session.scenario_hash, gate::kHistoryLimit, gate::kMinHistory,
      gate::kHistoryQuantile));
  report.details = {{"history", o.history},
                    {"run_id", run.session.run_id},
                    {"scenario_hash", run.session.scenario_hash},
                    {"entries", entries}};
  return publish(report, run.dir, o);
}

void setup_history_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string db;
    std::string run_dir;
    std::string label;
    std::string metric;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("history", "A history of accepted runs for the separate-session gate");
  cmd->require_subcommand(1);
  auto* add = cmd->add_subcommand("add", "Store a run's session values");
  add->add_option("db", o->db, "History file (SQLite; created if missing)")->required();
  add->add_option("run_dir", o->run_dir, "Run folder")->required();
  add->add_option("--label", o->label, "A label for the session, e.g. a commit or build");
  add->callback([o, &exit_code] {
    const auto run = gate::load_run_inputs(o->run_dir);
    auto info = run.session;
    info.label = o->label;
    const auto values =
        gate::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
    gate::HistoryDb db(o->db, true);
    const auto id = db.add(info, values);
    for (const auto& v : values) {
      std::cout << fmt::format(
          "{} ({}){}: {}\n", v.metric, gate::condition_label(v.where),
          v.variant.empty() ? "" : " [" + v.variant + "]",
          std::isfinite(v.value) ? fmt::format("{:.4g}", v.value) : "not stored: " + v.error);
    }
    std::cout << fmt::format("stored run {} as session {} in {}\n", info.run_id, id, o->db);
    exit_code = 0;
  });
  // Both listings are tables: Markdown by default, or any format of the one output scheme.
  const std::vector<std::string> formats = report::Table::formats();
  auto list_out = std::make_shared<OutputOptions>();
  auto* list = cmd->add_subcommand("list", "List the stored sessions");
  list->add_option("db", o->db, "History file")->required();
  add_output_options(list, *list_out, formats);
  list->callback([o, list_out, formats, &exit_code] {
    const auto targets = resolve_outputs(*list_out, formats, "history list");
    gate::HistoryDb db(o->db, false);
    report::Table t({{"session", true},
                     {"recorded_at", false},
                     {"run_id", false},
                     {"scenario", false},
                     {"scenario_hash", false},
                     {"git_revision", false},
                     {"label", false},
                     {"run_labels", false}});
    std::int64_t last = -1;
    for (const auto& r : db.rows()) {
      if (r.session_id != last) {
        t.add_row({std::to_string(r.session_id), r.info.recorded_at, r.info.run_id,
                   r.info.scenario_name, r.info.scenario_hash, r.info.git_revision, r.info.label,
                   r.info.run_labels});
        last = r.session_id;
      }
    }
    write_outputs(targets,
                  [&](std::ostream& out, const std::string& format) { t.write(out, format); });
    exit_code = 0;
  });
  auto show_out = std::make_shared<OutputOptions>();
  auto* show = cmd->add_subcommand("show", "Show the stored session values");
  show->add_option("db", o->db, "History file")->required();
  show->add_option("--metric", o->metric, "Only this metric");
  add_output_options(show, *show_out, formats);
  show->callback([o, show_out, formats, &exit_code] {
    const auto targets = resolve_outputs(*show_out, formats, "history show");
    gate::HistoryDb db(o->db, false);
    report::Table t({{"session", true},
                     {"run_id", false},
                     {"recorded_at", false},
                     {"metric", false},
                     {"condition", false},
                     {"variant", false},
                     {"value", true},
                     {"x_ref", true},
                     {"n", true}});
    for (const auto& r : db.rows()) {
      if (!o->metric.empty() && r.metric != o->metric) {
        continue;
      }
      t.add_row({std::to_string(r.session_id), r.info.run_id, r.info.recorded_at, r.metric,
                 r.condition, r.variant, fmt::format("{:.6g}", r.value),
                 fmt::format("{}", r.ref_prompt_tokens), std::to_string(r.n)});
    }
    write_outputs(targets,
                  [&](std::ostream& out, const std::string& format) { t.write(out, format); });
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
