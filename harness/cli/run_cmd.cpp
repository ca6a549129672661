#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/core/error.h"
#include "harness/process/signals.h"
#include "harness/report/summary.h"
#include "harness/run/results.h"
#include "harness/run/runner.h"

namespace kvbench::cli {

namespace {
struct RunCliOptions {
  std::string scenario;
  std::string results = "results";
  std::string server_bin;
  std::string model;
  std::string url;
  std::string models_dir;
  std::string resume;
  std::string extend;
  int sets = 1;
  bool quiet = false;
};
}  // namespace

void setup_run_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunCliOptions>();
  auto* cmd = app.add_subcommand("run", "Run a scenario and record every call");
  auto* scenario_opt =
      cmd->add_option("scenario", o->scenario, "Scenario file (JSON, comments allowed)");
  auto* resume_opt = cmd->add_option("--resume", o->resume,
                                     "Complete an interrupted run in this run folder instead");
  auto* extend_opt =
      cmd->add_option("--extend", o->extend,
                      "Add counterbalanced variant block sets (ABBA) to this finished run folder");
  cmd->add_option("--sets", o->sets, "How many sets --extend adds")->capture_default_str();
  scenario_opt->excludes(resume_opt);
  scenario_opt->excludes(extend_opt);
  resume_opt->excludes(extend_opt);
  cmd->add_option("--results", o->results, "Folder the run folder is created in")
      ->capture_default_str();
  cmd->add_option("--server-bin", o->server_bin,
                  "llama-server or ollama executable (managed mode)");
  cmd->add_option("--model", o->model,
                  "Model: a GGUF path, synthetic:<preset>, or an Ollama model name");
  cmd->add_option("--url", o->url, "Attach to a running server at this URL instead");
  cmd->add_option("--models-dir", o->models_dir, "Where synthetic models are written");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress lines on stderr");
  cmd->callback([o, &exit_code] {
    run::RunOptions ro;
    ro.results_root = o->results;
    ro.server_binary = o->server_bin;
    ro.model = o->model;
    ro.url = o->url;
    ro.models_dir = o->models_dir;
    ro.progress = !o->quiet;
    if (o->scenario.empty() && o->resume.empty() && o->extend.empty()) {
      throw InputError("kvbench run: give a scenario file, --resume RUN_DIR or --extend RUN_DIR");
    }
    run::RunSummary summary;
    if (!o->extend.empty()) {
      process::install_signal_handlers();
      summary = run::extend_run(o->extend, o->sets, ro);
    } else if (!o->resume.empty()) {
      process::install_signal_handlers();
      summary = run::resume_run(o->resume, ro);
    } else {
      const auto s = run::with_overrides(scenario::load_scenario(o->scenario), ro);
      process::install_signal_handlers();
      summary = run::run_scenario(s, ro);
    }
    const auto loaded = run::load_run(summary.run_dir);
    report::write_markdown(std::cout, loaded.run, loaded.calls, loaded.warnings);
    std::cout << "\nresults: " << summary.run_dir.string() << "\n";
    if (!summary.complete) {
      fmt::print(stderr, "the run is incomplete: {} of its calls were recorded\n", summary.calls);
      exit_code = process::stop_requested() ? 128 + process::stop_signal() : 1;
    }
  });
}

}  // namespace kvbench::cli
