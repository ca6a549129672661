// kvbench reproduce lesson: runs the lesson's labs and writes one report with every figure
// beside the value measured here and a shape check per claim, then the plots.
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/data_files.h"
#include "harness/cli/output.h"
#include "harness/cli/server_options.h"
#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/lesson/render.h"
#include "harness/local/local_run.h"
#include "harness/process/run_capture.h"
#include "harness/process/signals.h"
#include "harness/report/summary.h"
#include "harness/results/results.h"
#include "harness/run/runner.h"
#include "harness/scenario/kinds.h"

namespace kvbench::cli {

namespace {
namespace fs = std::filesystem;

struct ReproduceOptions {
  OutputOptions out;
  std::string what;
  std::string only;
  bool quick = false;
  std::string results = "results";
  std::string kind, model, url, server_bin, models_dir;
  bool no_plots = false;
  bool quiet = false;
  bool verbose = false;
  std::string color = "auto";
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs the plot script on the reproduction folder; a missing python or matplotlib is a note.
void write_plots(const fs::path& dir) {
  const auto script = find_data_file(fs::path("scripts") / "plot_lesson.py");
  if (script.empty() || !fs::exists("/usr/bin/python3")) {
    fmt::print(stderr, "plots: skipped ({} not found)\n",
               script.empty() ? "scripts/plot_lesson.py" : "/usr/bin/python3");
    return;
  }
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec).string();
  const auto r =
      process::run_capture({"/usr/bin/python3", script.string(), dir.string(), "--kvbench", exe},
                           std::chrono::minutes(5));
  const bool ok =
      r.status && r.status->kind == process::ExitStatus::Kind::exited && r.status->code == 0;
  fmt::print(stderr, "plots: {}\n",
             ok ? (dir / "index.html").string() : "failed: " + r.stderr_text);
}

lesson::LabRun run_lab(const lesson::Lab& lab, const scenario::Scenario& s,
                       const run::RunOptions& ro) {
  lesson::LabRun out{lab, "", 0, {}};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const auto summary = local::run_scenario(s, ro);
    out.run_dir = summary.run_dir.string();
    auto loaded = results::load_run(summary.run_dir);
    out.outcome = lesson::evaluate_lab(
        lab.id, report::build_report(std::move(loaded.run), std::move(loaded.calls),
                                     std::move(loaded.warnings), loaded.answers));
    if (!summary.complete) {
      out.outcome.notes.push_back("the run is incomplete");
    }
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    out.outcome = lesson::lab_not_run(lab.id, fmt::format("the lab did not run: {}", e.what()));
  }
  out.seconds = seconds_since(t0);
  return out;
}

int reproduce(const ReproduceOptions& o) {
  const auto targets = resolve_outputs(o.out, {"md", "json"}, "reproduce");
  lesson::LabOptions lo{o.quick, o.kind, o.model, o.url, o.server_bin};
  const auto labs = lesson::select_labs(o.only);
  std::vector<scenario::Scenario> scenarios;
  std::set<std::string> models;
  for (const auto& lab : labs) {  // every scenario is checked before anything runs
    scenarios.push_back(lesson::lab_scenario(lab, lo));
    models.insert(scenarios.back().server.model);
  }
  results::check_writable_folder(o.results, "--results");
  run::RunOptions ro;
  ro.models_dir = o.models_dir;
  const run::ProgressStyle style = progress_style(o.quiet, o.verbose, o.color);
  ro.progress = style.enabled;
  ro.live_progress = style.live;
  ro.color = style.color;
  ro.results_root = results::create_run_dir(o.results, o.quick ? "lesson-quick" : "lesson");
  const auto started = utc_now_rfc3339();
  const auto t0 = std::chrono::steady_clock::now();
  process::install_signal_handlers();
  std::vector<lesson::LabRun> runs;
  for (std::size_t i = 0; i < labs.size() && !process::stop_requested(); ++i) {
    if (!o.quiet) {
      fmt::print(stderr, "lab {}/{}: {}\n", i + 1, labs.size(), labs[i].title);
    }
    runs.push_back(run_lab(labs[i], scenarios[i], ro));
  }
  const auto& server = scenarios.front().server;
  std::string model_text;
  for (const auto& m : models) {
    model_text += (model_text.empty() ? "" : ", ") + m;
  }
  const lesson::RunInfo info{
      o.quick ? "quick" : "default",
      fmt::format("{} ({})", scenario::to_string(server.kind),
                  server.managed() ? "managed" : "attached at " + server.url),
      model_text, started, seconds_since(t0)};
  const auto report = lesson::report_json(runs, info, lesson::figures());
  results::write_json_atomic(ro.results_root / "lesson-report.json", report);
  std::ofstream md(ro.results_root / "lesson-report.md");
  lesson::write_report_markdown(md, report);
  md.close();
  write_outputs(targets, [&](std::ostream& out, const std::string& format) {
    if (format == "json") {
      out << report.dump(2) << "\n";
    } else {
      lesson::write_report_markdown(out, report);
    }
  });
  if (!o.no_plots) {
    write_plots(ro.results_root);
  }
  std::cout.flush();
  fmt::print(stderr, "results: {}\n", ro.results_root.string());
  if (process::stop_requested()) {
    return 128 + process::stop_signal();
  }
  return lesson::report_exit_code(report);
}
}  // namespace

void setup_reproduce_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  auto* cmd = app.add_subcommand(
      "reproduce", "Reproduce the lesson's labs and check its claims (exit 1 unless all pass)");
  cmd->add_option("what", o->what, "What to reproduce: lesson")
      ->required()
      ->check(CLI::IsMember({"lesson"}));
  cmd->add_option("--only", o->only,
                  "Comma-separated labs: prompt-length, context-window, cache-type, "
                  "prefix-reuse, repeated-prompt (default: all)");
  cmd->add_flag("--quick", o->quick, "The small size (a few minutes; scenarios/lesson/quick.json)");
  cmd->add_option("--results", o->results, "Folder the reproduction folder is created in")
      ->capture_default_str();
  cmd->add_option("--kind", o->kind,
                  "Server kind: llama-server, ollama, openai or anthropic (managed: a "
                  "llama-server called through /v1/chat/completions or /v1/messages)")
      ->check(CLI::IsMember(scenario::kind_names()));
  cmd->add_option("--model", o->model,
                  "Model: a GGUF path, synthetic:<preset>, or an Ollama model name");
  cmd->add_option("--url", o->url, "Attach to a running server at this URL instead");
  cmd->add_option("--server-bin", o->server_bin, "llama-server or ollama executable (managed)");
  cmd->add_option("--models-dir", o->models_dir, "Where synthetic models are written");
  cmd->add_flag("--no-plots", o->no_plots, "Do not run scripts/plot_lesson.py");
  add_progress_options(cmd, o->quiet, o->verbose, o->color);
  add_output_options(cmd, o->out, {"md", "json"});
  cmd->callback([o, &exit_code] { exit_code = reproduce(*o); });
}

}  // namespace kvbench::cli
