#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/attached_server.h"
#include "harness/cli/commands.h"
#include "harness/cli/data_files.h"
#include "harness/cli/output.h"
#include "harness/cli/run_report.h"
#include "harness/cli/scenario_flags.h"
#include "harness/cli/server_options.h"
#include "harness/cli/start_history.h"
#include "harness/core/error.h"
#include "harness/local/local_run.h"
#include "harness/process/signals.h"
#include "harness/report/repeat.h"
#include "harness/results/results.h"
#include "harness/run/runner.h"
#include "harness/session/host.h"

namespace kvbench::cli {

namespace {

const std::vector<std::string>& repeat_formats() {
  static const std::vector<std::string> formats{"md", "json", "csv", "tsv"};
  return formats;
}

struct RepeatCliOptions {
  int count = 0;
  std::string scenario;
  std::vector<std::string> runs;  // --runs: existing run folders, nothing run
  ServerCliOptions server;
  std::string history;  // --history: where the start-to-start components are stored
  scenario::ScenarioEdits edits;
  OutputOptions out;
};

constexpr int kMaxRepeats = 1000;

report::RepeatRun repeat_run(const std::string& dir, const report::RunReport& r) {
  const auto host = session::host_fingerprint(r.run);
  report::RepeatRun run;
  run.dir = dir;
  run.scenario_hash = results::first_scenario_hash(r.run);
  run.effects = r.analysis.effects;
  run.host_class = session::host_class(host);
  run.server = host.server_version;
  if (r.run.model.is_object()) {
    run.model = r.run.model.value("name", r.run.model.value("path", std::string()));
  }
  run.attached = analysis::start_facts(r.run).one_start;
  return run;
}

// Reads the run folders of --runs: each must be a run of the same scenario (by name).
std::vector<report::RepeatRun> read_runs(const std::vector<std::string>& dirs, std::string& name) {
  std::vector<report::RepeatRun> runs;
  for (const auto& dir : dirs) {
    auto loaded = results::load_run(dir);
    for (const auto& w : loaded.warnings) {
      fmt::print(stderr, "warning: {}: {}\n", dir, w);
    }
    const std::string its = loaded.run.scenario.value("name", loaded.run.scenario_file);
    if (runs.empty()) {
      name = its;
    } else if (its != name) {
      throw InputError(
          fmt::format("kvbench repeat --runs: {} is a run of '{}', {} of '{}': "
                      "expected runs of one scenario",
                      dir, its, dirs.front(), name));
    }
    const auto report = report::build_report(std::move(loaded.run), std::move(loaded.calls),
                                             std::move(loaded.warnings), loaded.answers);
    runs.push_back(repeat_run(dir, report));
  }
  return runs;
}

// Runs the scenario o.count times, each a run of its own (a fresh managed server for each), its
// report beside it. Sets `exit_code` as `kvbench run` would for the worst of them; stops at a run
// that ended incomplete.
std::vector<report::RepeatRun> run_repeats(const RepeatCliOptions& o, std::string& name,
                                           int& exit_code) {
  run::RunOptions ro = to_run_options(o.server);
  const auto s = scenario_to_run(o.scenario, edits_with_models(o.edits, o.server.models), ro);
  results::check_writable_folder(ro.results_root, "--results");
  process::install_signal_handlers();
  name = s.name;
  std::vector<report::RepeatRun> runs;
  for (int i = 1; i <= o.count; ++i) {
    fmt::print(stderr, "kvbench repeat: run {} of {}\n", i, o.count);
    const run::RunSummary summary = local::run_scenario(s, ro);
    const auto report = write_run_report(summary.run_dir, {});
    fmt::print(stderr, "results: {}\n", summary.run_dir.string());
    if (!summary.complete) {
      fmt::print(stderr, "the run is incomplete: {} of its calls were recorded\n", summary.calls);
      exit_code = process::stop_requested() ? 128 + process::stop_signal() : 1;
      break;
    }
    for (const auto& why : report::shortfalls(report)) {
      fmt::print(stderr, "kvbench repeat: {}: {}\n", summary.run_dir.string(), why);
      exit_code = 3;
    }
    runs.push_back(repeat_run(summary.run_dir.string(), report));
  }
  return runs;
}

int run_repeat(const RepeatCliOptions& o) {
  const auto targets = resolve_outputs(o.out, repeat_formats(), "repeat");
  // The quick start, edited.
  const bool made = edits_with_models(o.edits, o.server.models).any() || !o.server.url.empty();
  if (o.runs.empty() == (o.scenario.empty() && !made)) {
    throw InputError(
        "kvbench repeat: give N and a scenario file (or flags that edit the quick "
        "start), or --runs RUN_DIR RUN_DIR ...");
  }
  if (!o.runs.empty() && o.edits.any()) {
    throw InputError(fmt::format("kvbench repeat --runs: {} edit a scenario; --runs runs nothing",
                                 fmt::join(o.edits.flags(), ", ")));
  }
  if (!o.runs.empty() && o.runs.size() < 2) {
    throw InputError("kvbench repeat --runs: expected 2 run folders or more");
  }
  if (o.runs.empty() && (o.count < 2 || o.count > kMaxRepeats)) {
    throw InputError(
        fmt::format("kvbench repeat: N: expected 2 to {} runs, got {}", kMaxRepeats, o.count));
  }
  const std::string history = start_history(o.history);
  check_start_history_writable(history);
  std::string name;
  int exit_code = 0;
  const auto runs = o.runs.empty() ? run_repeats(o, name, exit_code) : read_runs(o.runs, name);
  if (runs.size() < 2) {
    fmt::print(stderr, "kvbench repeat: {} complete run(s), too few to compare\n", runs.size());
    return exit_code == 0 ? 1 : exit_code;
  }
  const auto r = report::repeat_report(name, runs);
  store_start_taus(r, runs, history);
  write_outputs(targets, [&](std::ostream& out, const std::string& format) {
    if (format == "md") {
      report::write_repeat_markdown(out, r);
    } else if (format == "json") {
      out << report::to_json(r).dump(2) << "\n";
    } else {
      report::repeat_table(r).write(out, format);
    }
  });
  return exit_code;
}

}  // namespace

void setup_repeat_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RepeatCliOptions>();
  auto* cmd = app.add_subcommand(
      "repeat",
      "Run a scenario N times (a fresh managed server each time) and give each headline effect "
      "over the runs: its mean with an interval over runs, the Birge ratio of the single runs' "
      "intervals and the run-to-run component; or read finished runs (--runs)");
  auto* count_opt = cmd->add_option("N", o->count, "How many runs (2 or more)")->type_name("N");
  auto* scenario_opt =
      cmd->add_option("scenario", o->scenario,
                      "Scenario file (JSON, comments allowed; - for stdin), or the name of a "
                      "bundled one")
          ->type_name("FILE");
  auto* runs_opt = cmd->add_option("--runs", o->runs,
                                   "Read these finished runs of one scenario instead; runs nothing")
                       ->type_name("RUN_DIR")
                       ->expected(2, kMaxRepeats);
  count_opt->excludes(runs_opt);
  scenario_opt->excludes(runs_opt);
  add_server_options(cmd, o->server, "Folder the run folders are created in");
  add_scenario_flags(cmd, o->edits);
  add_start_history_option(cmd, o->history,
                           "Store each effect's start-to-start component (tau) in this history "
                           "(SQLite file or postgresql:// URL), for `run --history`");
  add_output_options(cmd, o->out, repeat_formats());
  cmd->callback([o, &exit_code] { exit_code = run_repeat(*o); });
}

}  // namespace kvbench::cli
