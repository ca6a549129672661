// kvbench ingest, kvbench history add/list/show/export/import/migrate, and the separate-session
// gate against a history (a SQLite file or a PostgreSQL database).

#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/gate_cmd.h"
#include "harness/cli/history_report.h"
#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/gate/decision.h"
#include "harness/gate/history_gate.h"
#include "harness/history/archive.h"
#include "harness/history/store.h"
#include "harness/report/table.h"
#include "harness/session/run_inputs.h"

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

std::vector<gate::HistoryEntry> judge(const history::History& db, const gate::RunInputs& run,
                                      const gate::RunInputs* baseline,
                                      const scenario::GateConfig& config,
                                      const std::string& host_class) {
  const auto values = gate::session_values(run.loaded.calls, config, run.scenario.seed);
  const auto base_values =
      baseline == nullptr
          ? std::vector<gate::SessionValue>{}
          : gate::session_values(baseline->loaded.calls, config, baseline->scenario.seed);
  std::vector<gate::HistoryEntry> entries;
  for (const auto& v : values) {
    history::RecentQuery q;
    q.scenario_hash = run.session.scenario_hash;
    q.host_class = host_class;
    q.metric = v.metric;
    q.condition = gate::condition_label(v.where);
    q.variant = v.variant;
    q.limit = gate::kHistoryLimit;
    q.exclude_run_id = run.session.run_id;
    const auto history = db.recent(q);
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

// What a writing command says about a history it migrated on opening.
void note_migration(const history::History& db) {
  if (db.migrated_from() != 0 && db.migrated_from() < history::kSchemaVersion) {
    std::cerr << fmt::format(
        "note: {}: migrated the history from schema version {} to {} ({} sessions' hosts read "
        "from their run folders)\n",
        db.where(), db.migrated_from(), db.schema_version(), db.fingerprints_recovered());
  }
}

// Ingests one run folder; prints its values (verbose) and what was stored.
void ingest_run(history::History& db, const std::string& dir, const std::string& label,
                bool print_values) {
  const auto run = gate::load_run_inputs(dir);
  history::check_ingestible(run);
  const auto values = gate::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
  const auto added = db.add(history::session_of(run, label, values));
  if (print_values) {
    for (const auto& v : values) {
      std::cout << fmt::format(
          "{} ({}){}: {}\n", v.metric, gate::condition_label(v.where),
          v.variant.empty() ? "" : " [" + v.variant + "]",
          std::isfinite(v.value) ? fmt::format("{:.4g}", v.value) : "not stored: " + v.error);
    }
  }
  if (added.added) {
    std::cout << fmt::format("stored run {} as session {} in {} ({} calls; host: {})\n",
                             run.session.run_id, added.id, db.where(), run.loaded.calls.size(),
                             run.session.host_class);
  } else {
    std::cout << fmt::format("run {} is already session {} in {}; nothing written\n",
                             run.session.run_id, added.id, db.where());
  }
}

}  // namespace

int gate_against_history(const GateCliOptions& o) {
  const bool pair = !o.baseline.empty();
  const auto run = gate::load_run_inputs(pair ? o.candidate : o.run_dir);
  const auto db = history::History::open(o.history, history::Access::read);
  if (db->sessions() == 0) {
    throw InputError(fmt::format(
        "{}: the history is empty: store accepted runs first with kvbench ingest RUN_DIR "
        "--history {}",
        db->where(), db->where()));
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
  const std::string host_class = o.any_host ? "" : run.session.host_class;
  const auto entries = judge(*db, run, base ? &*base : nullptr, config, host_class);
  // Which sessions the gate compared with, and which it left out.
  std::string classes;
  std::size_t other = 0;
  for (const auto& [cls, n] : db->host_classes(run.session.scenario_hash)) {
    if (!o.any_host && cls != host_class) {
      other += n;
    }
  }
  classes = o.any_host ? "every host class" : fmt::format("host class \"{}\"", host_class);
  if (other > 0) {
    classes += fmt::format("; {} sessions of other host classes left out", other);
  }
  gate::GateReport report;
  report.title = "kvbench gate: " + run.scenario.name + (pair ? " (two sessions)" : " (history)");
  report.mode = pair ? "sessions" : "history";
  report.rows = gate::history_rows(
      entries, pair ? fmt::format("run {} vs run {}", run.session.run_id, base->session.run_id)
                    : fmt::format("run {} vs history", run.session.run_id));
  report.overall = stats::overall_verdict(entries);
  report.inconclusive_fails = config.inconclusive_fails;
  report.notes.push_back(fmt::format(
      "session values: fitted at the reference point (t = 0); history {} (scenario {}, {}; the "
      "last {} sessions at most, {} needed), prediction interval q = {}",
      db->where(), run.session.scenario_hash, classes, gate::kHistoryLimit, gate::kMinHistory,
      gate::kHistoryQuantile));
  report.details = {
      {"history", db->where()},
      {"run_id", run.session.run_id},
      {"scenario_hash", run.session.scenario_hash},
      {"host_class", o.any_host ? nlohmann::json(nullptr) : nlohmann::json(host_class)},
      {"other_host_sessions", other},
      {"entries", entries}};
  return publish(report, run.dir, o);
}

namespace {

// What the history commands take (each its own part of it).
struct HistoryOptions {
  std::string db;
  std::vector<std::string> run_dirs;
  std::string label;
  std::string metric;
  std::vector<std::string> files;
};

const char* const kWhereHelp =
    "History: a SQLite file, or a PostgreSQL URL postgresql://USER@HOST:PORT/DB (the password "
    "from PGPASSWORD or ~/.pgpass)";

// kvbench ingest: every run is checked before the history is opened, so bad input writes
// nothing.
void run_ingest(const HistoryOptions& o) {
  for (const auto& dir : o.run_dirs) {
    history::check_ingestible(gate::load_run_inputs(dir));
  }
  const auto db = history::History::open(o.db, history::Access::write);
  note_migration(*db);
  for (const auto& dir : o.run_dirs) {
    ingest_run(*db, dir, o.label, false);
  }
}

void run_history_add(const HistoryOptions& o) {
  history::check_ingestible(gate::load_run_inputs(o.run_dirs.front()));
  const auto db = history::History::open(o.db, history::Access::write);
  note_migration(*db);
  ingest_run(*db, o.run_dirs.front(), o.label, true);
}

void run_history_list(const HistoryOptions& o, const OutputOptions& out_options,
                      const std::vector<std::string>& formats) {
  const auto targets = resolve_outputs(out_options, formats, "history list");
  const auto db = history::History::open(o.db, history::Access::read);
  report::Table t({{"session", true},
                   {"recorded_at", false},
                   {"run_id", false},
                   {"scenario", false},
                   {"scenario_hash", false},
                   {"host_class", false},
                   {"hostname", false},
                   {"server_version", false},
                   {"calls", true},
                   {"git_revision", false},
                   {"label", false},
                   {"run_labels", false}});
  for (const auto& s : db->list()) {
    const auto& i = s.info;
    t.add_row({std::to_string(s.id), i.recorded_at, i.run_id, i.scenario_name, i.scenario_hash,
               i.host_class, i.host.hostname, i.host.server_version, std::to_string(i.calls),
               i.git_revision, i.label, i.run_labels});
  }
  write_outputs(targets,
                [&](std::ostream& out, const std::string& format) { t.write(out, format); });
}

void run_history_show(const HistoryOptions& o, const OutputOptions& out_options,
                      const std::vector<std::string>& formats) {
  const auto targets = resolve_outputs(out_options, formats, "history show");
  const auto db = history::History::open(o.db, history::Access::read);
  report::Table t({{"session", true},
                   {"run_id", false},
                   {"recorded_at", false},
                   {"host_class", false},
                   {"metric", false},
                   {"condition", false},
                   {"variant", false},
                   {"value", true},
                   {"x_ref", true},
                   {"n", true}});
  for (const auto& r : db->rows()) {
    const auto& v = r.value;
    if (!o.metric.empty() && v.metric != o.metric) {
      continue;
    }
    t.add_row({std::to_string(r.session_id), r.info.run_id, r.info.recorded_at, r.info.host_class,
               v.metric, v.condition, v.variant, fmt::format("{:.6g}", v.value),
               fmt::format("{}", v.ref_prompt_tokens), std::to_string(v.n)});
  }
  write_outputs(targets,
                [&](std::ostream& out, const std::string& format) { t.write(out, format); });
}

void run_history_export(const HistoryOptions& o, const OutputOptions& out_options) {
  const auto targets = resolve_outputs(out_options, {"jsonl"}, "history export");
  const auto db = history::History::open(o.db, history::Access::read);
  const auto ids = db->session_ids();
  write_outputs(targets, [&](std::ostream& out, const std::string&) {
    for (const auto id : ids) {
      out << history::to_export_line(db->session(id)).dump() << '\n';
    }
  });
  std::cerr << fmt::format("exported {} sessions from {}\n", ids.size(), db->where());
}

// Every line of every file is checked before the history is opened.
void run_history_import(const HistoryOptions& o) {
  std::vector<std::pair<std::string, std::vector<history::Session>>> inputs;
  for (const auto& f : o.files) {
    if (f == "-") {
      inputs.emplace_back("stdin", history::read_export(std::cin, "stdin"));
      continue;
    }
    std::ifstream in(f);
    if (!in) {
      throw InputError(fmt::format("{}: cannot read it", f));
    }
    inputs.emplace_back(f, history::read_export(in, f));
  }
  const auto db = history::History::open(o.db, history::Access::write);
  note_migration(*db);
  std::size_t added = 0;
  std::size_t known = 0;
  for (const auto& [name, sessions] : inputs) {
    for (const auto& s : sessions) {
      (db->add(s).added ? added : known) += 1;
    }
  }
  std::cout << fmt::format("imported {} sessions into {} ({} already there)\n", added, db->where(),
                           known);
}

void run_history_migrate(const HistoryOptions& o) {
  const auto db = history::History::open(o.db, history::Access::write);
  if (db->migrated_from() != 0 && db->migrated_from() < history::kSchemaVersion) {
    note_migration(*db);
  } else {
    std::cout << fmt::format("{}: already at schema version {}\n", db->where(),
                             db->schema_version());
  }
}

}  // namespace

void setup_history_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<HistoryOptions>();
  const std::string where_help = kWhereHelp;
  // The callback of a command that writes no output of the output scheme.
  const auto done = [o, &exit_code](void (*run)(const HistoryOptions&)) {
    return [o, run, &exit_code] {
      run(*o);
      exit_code = 0;
    };
  };
  auto* ingest = app.add_subcommand(
      "ingest", "Store finished runs in a history (SQLite or PostgreSQL), once each");
  ingest->add_option("run_dir", o->run_dirs, "Run folders")->required();
  ingest->add_option("--history", o->db, where_help)->required();
  ingest->add_option("--label", o->label, "A label for the sessions, e.g. a commit or build");
  ingest->callback(done(run_ingest));

  auto* cmd =
      app.add_subcommand("history", "A history of accepted runs for the separate-session gate");
  cmd->require_subcommand(1);
  auto* add = cmd->add_subcommand("add", "Store a run's session values (as kvbench ingest)");
  add->add_option("db", o->db, where_help + "; a file is created if missing")->required();
  add->add_option("run_dir", o->run_dirs, "Run folder")->required()->expected(1);
  add->add_option("--label", o->label, "A label for the session, e.g. a commit or build");
  add->callback(done(run_history_add));
  // Both listings are tables: Markdown by default, or any format of the one output scheme.
  const std::vector<std::string> formats = report::Table::formats();
  auto list_out = std::make_shared<OutputOptions>();
  auto* list = cmd->add_subcommand("list", "List the stored sessions");
  list->add_option("db", o->db, where_help)->required();
  add_output_options(list, *list_out, formats);
  list->callback([o, list_out, formats, &exit_code] {
    run_history_list(*o, *list_out, formats);
    exit_code = 0;
  });
  auto show_out = std::make_shared<OutputOptions>();
  auto* show = cmd->add_subcommand("show", "Show the stored session values");
  show->add_option("db", o->db, where_help)->required();
  show->add_option("--metric", o->metric, "Only this metric");
  add_output_options(show, *show_out, formats);
  show->callback([o, show_out, formats, &exit_code] {
    run_history_show(*o, *show_out, formats);
    exit_code = 0;
  });
  add_history_report(*cmd, where_help, exit_code);
  auto export_out = std::make_shared<OutputOptions>();
  auto* exp = cmd->add_subcommand("export",
                                  "Write every session (facts, host, values, calls) as JSON lines");
  exp->add_option("db", o->db, where_help)->required();
  add_output_options(exp, *export_out, {"jsonl"});
  exp->callback([o, export_out, &exit_code] {
    run_history_export(*o, *export_out);
    exit_code = 0;
  });
  auto* imp = cmd->add_subcommand(
      "import", "Store the sessions of exported JSON lines, once each (each in one transaction)");
  imp->add_option("db", o->db, where_help + "; a file is created if missing")->required();
  imp->add_option("files", o->files, "Exported JSON lines (- for stdin)")->required();
  imp->callback(done(run_history_import));
  auto* migrate = cmd->add_subcommand(
      "migrate", "Bring a history written by an older kvbench to this schema version");
  migrate->add_option("db", o->db, where_help)->required();
  migrate->callback(done(run_history_migrate));
}

}  // namespace kvbench::cli
