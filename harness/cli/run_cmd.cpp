#include <iostream>
#include <memory>
#include <sstream>

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
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/local/local_run.h"
#include "harness/process/signals.h"
#include "harness/report/html.h"
#include "harness/report/summary.h"
#include "harness/results/results.h"
#include "harness/run/runner.h"

namespace kvbench::cli {

namespace {
struct RunCliOptions {
  std::string scenario;
  ServerCliOptions server;
  std::string resume;
  std::string extend;
  int sets = 1;
  std::string trace_shard;
  std::string history;  // --history: start-to-start components to borrow
  scenario::ScenarioEdits edits;
  std::string scenario_out;  // --scenario-out: the scenario the flags made
  bool detail = false;
  OutputOptions out;
};

// Runs the scenario, or completes (--resume) or extends (--extend) a run folder.
run::RunSummary run_or_continue(const RunCliOptions& o, run::RunOptions ro) {
  const auto edits = edits_with_models(o.edits, o.server.models);
  if ((edits.any() || !o.scenario_out.empty()) && (!o.resume.empty() || !o.extend.empty())) {
    throw InputError(fmt::format("kvbench run: {} edit a scenario: a run folder ({}) keeps its own",
                                 o.scenario_out.empty()
                                     ? fmt::format("{}", fmt::join(edits.flags(), ", "))
                                     : "--scenario-out",
                                 o.resume.empty() ? "--extend" : "--resume"));
  }
  if (!o.extend.empty()) {
    results::check_writable_folder(o.extend, "--extend");
    process::install_signal_handlers();
    return local::extend_run(o.extend, o.sets, ro);
  }
  if (!o.resume.empty()) {
    results::check_writable_folder(o.resume, "--resume");
    process::install_signal_handlers();
    return local::resume_run(o.resume, ro);
  }
  const auto s = scenario_to_run(o.scenario, edits, ro);
  if (!o.scenario_out.empty()) {
    write_scenario_out(o.scenario_out, s);
  }
  results::check_writable_folder(ro.results_root, "--results");
  process::install_signal_handlers();
  return local::run_scenario(s, ro);
}

// kvbench run; returns its exit code.
int run_run(const RunCliOptions& o) {
  // What stdout (and any -o) carries once the run ends, checked before anything starts.
  const auto targets = resolve_outputs(o.out, report::report_formats(), "run");
  run::RunOptions ro = to_run_options(o.server);
  ro.trace_shard = o.trace_shard;
  if (o.scenario.empty() && o.resume.empty() && o.extend.empty() &&
      !edits_with_models(o.edits, o.server.models).any() && o.server.url.empty()) {
    throw InputError(
        "kvbench run: give a scenario file, flags that edit the quick start (--prompt-tokens "
        "256,1024, ...), --url URL, --resume RUN_DIR or --extend RUN_DIR");
  }
  const std::string history = start_history(o.history);
  check_start_history(history);
  const run::RunSummary summary = run_or_continue(o, ro);
  give_start_taus(summary.run_dir, history);
  // The terminal's default is brief; a format or file asked for gets the whole of it.
  const bool brief = !o.detail && o.out.format.empty() && o.out.files.empty();
  const auto report = write_run_report(summary.run_dir, targets, brief);
  const auto dir = summary.run_dir;
  fmt::print(stderr,
             "report: {}{}\npage:   {} (the plots; open it in a browser)\nall:    {} "
             "(summary.json, calls.jsonl, run.json)\n",
             (dir / "report.md").string(), brief ? " (--detail prints it here)" : "",
             (dir / "report.html").string(), dir.string());
  if (!summary.complete) {
    fmt::print(stderr, "the run is incomplete: {} of its calls were recorded\n", summary.calls);
    return process::stop_requested() ? 128 + process::stop_signal() : 1;
  }
  // A failing server is a measurement, but a run short of its plan does not pass as one.
  const auto short_of_plan = report::shortfalls(report);
  for (const auto& why : short_of_plan) {
    fmt::print(stderr, "kvbench run: {}\n", why);
  }
  return short_of_plan.empty() ? 0 : 3;
}
}  // namespace

// The report stays with the run: report.md, report.html and summary.json (what `kvbench report
// --format json` writes), replaced whole, so stdout can be redirected into a clean Markdown file;
// then the outputs asked for.
report::RunReport write_run_report(const std::filesystem::path& run_dir,
                                   const std::vector<OutputTarget>& targets, bool brief) {
  auto loaded = results::load_run(run_dir);
  auto report = report::build_report(std::move(loaded.run), std::move(loaded.calls),
                                     std::move(loaded.warnings), loaded.answers);
  std::ostringstream md;
  report::write_markdown(md, report);
  {
    AtomicFileWriter out(run_dir / "report.md");
    out.write(md.str());
    out.commit();
  }
  {
    std::ostringstream page;
    report::write_html(page, report, md.str());
    AtomicFileWriter out(run_dir / "report.html");
    out.write(page.str());
    out.commit();
  }
  results::write_json_atomic(run_dir / "summary.json", report::to_json(report));
  write_outputs(targets, [&](std::ostream& out, const std::string& format) {
    if (format == "md" && brief) {
      report::write_brief_markdown(out, report);
    } else if (format == "md") {
      out << md.str();
    } else {
      report::write_report(out, report, format);
    }
  });
  return report;
}

void setup_run_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunCliOptions>();
  auto* cmd = app.add_subcommand("run", "Run a scenario and record every call");
  auto* scenario_opt =
      cmd->add_option("scenario", o->scenario,
                      "Scenario file (JSON, comments allowed; - for stdin), or the name of a "
                      "bundled one: quickstart, conversation, ...")
          ->type_name("FILE");
  auto* resume_opt = cmd->add_option("--resume", o->resume,
                                     "Complete an interrupted run in this run folder instead")
                         ->type_name("RUN_DIR");
  auto* extend_opt =
      cmd->add_option("--extend", o->extend,
                      "Add counterbalanced variant block sets (ABBA) to this finished run folder")
          ->type_name("RUN_DIR");
  cmd->add_option("--sets", o->sets, "How many sets --extend adds")->capture_default_str();
  cmd->add_option("--trace-shard", o->trace_shard,
                  "A trace scenario's shard K of N (0-based): its prefix families numbered by "
                  "first arrival, those with number mod N == K, each whole")
      ->type_name("K/N")
      ->excludes(resume_opt)
      ->excludes(extend_opt);
  scenario_opt->excludes(resume_opt);
  scenario_opt->excludes(extend_opt);
  resume_opt->excludes(extend_opt);
  cmd->add_flag("--detail", o->detail,
                "Print the whole report (report.md) on stdout, not only what was found and the "
                "condition table");
  add_server_options(cmd, o->server, "Folder the run folder is created in");
  add_scenario_flags(cmd, o->edits);
  cmd->add_option("--scenario-out", o->scenario_out,
                  "Write the scenario the flags made (resolved, as run.json keeps it) to FILE")
      ->type_name("FILE");
  add_start_history_option(cmd, o->history,
                           "Add the start-to-start component `kvbench repeat --history` stored "
                           "for this machine class, server build and model to effects resting "
                           "on fewer than 4 server starts");
  add_output_options(cmd, o->out, report::report_formats());
  cmd->callback([o, &exit_code] { exit_code = run_run(*o); });
}

}  // namespace kvbench::cli
