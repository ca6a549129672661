#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/cli/commands.h"
#include "harness/core/error.h"
#include "harness/report/capacity.h"
#include "harness/report/effects.h"
#include "harness/report/lesson_figures.h"
#include "harness/report/memory.h"
#include "harness/report/prefix.h"
#include "harness/report/summary.h"
#include "harness/results/results.h"

namespace kvbench::cli {

namespace {
std::ofstream open_out(const std::string& path) {
  std::ofstream out(path);
  if (!out) {
    throw InputError(fmt::format("cannot write {}", path));
  }
  return out;
}
}  // namespace

void setup_report_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string run_dir;
    std::string csv;
    std::string calls_csv;
    std::string json;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("report", "Summarise a run folder (works offline)");
  cmd->add_option("run_dir", o->run_dir, "Run folder (results/<run>)")
      ->required()
      ->type_name("RUN_DIR");
  cmd->add_option("--csv", o->csv, "Write the per-condition table as CSV (- for stdout)")
      ->type_name("FILE");
  cmd->add_option("--calls-csv", o->calls_csv, "Write one CSV row per call (- for stdout)")
      ->type_name("FILE");
  cmd->add_option("--json", o->json, "Write the summary as JSON (- for stdout)")->type_name("FILE");
  cmd->callback([o, &exit_code] {
    const std::filesystem::path capacity = std::filesystem::path(o->run_dir) / "capacity.json";
    if (std::filesystem::exists(capacity)) {  // a `kvbench capacity` folder
      if (!o->csv.empty() || !o->calls_csv.empty()) {
        throw InputError(fmt::format(
            "{}: a capacity folder has no per-condition or per-call table: --csv and --calls-csv "
            "apply to run folders (its levels are run folders: report one of them)",
            o->run_dir));
      }
      std::ifstream in(capacity);
      const auto summary = nlohmann::json::parse(in, nullptr, false);
      if (summary.is_discarded()) {
        throw InputError(fmt::format("{}: not valid JSON", capacity.string()));
      }
      if (o->json == "-") {
        std::cout << summary.dump(2) << "\n";
      } else {
        if (!o->json.empty()) {
          open_out(o->json) << summary.dump(2) << "\n";
        }
        report::write_capacity_markdown(std::cout, summary);
      }
      exit_code = 0;
      return;
    }
    const int to_stdout = (o->csv == "-") + (o->calls_csv == "-") + (o->json == "-");
    if (to_stdout > 1) {
      throw InputError(
          "kvbench report: only one of --csv, --calls-csv and --json can be - (stdout)");
    }
    const auto loaded = results::load_run(o->run_dir);
    for (const auto& w : loaded.warnings) {
      fmt::print(stderr, "warning: {}\n", w);
    }
    const auto report =
        report::build_report(loaded.run, loaded.calls, loaded.warnings, loaded.answers);
    // With one output on stdout (-), that output is all stdout carries.
    if (to_stdout == 0) {
      report::write_markdown(std::cout, report);
    }
    const auto write_to = [](const std::string& path, const auto& write) {
      if (path == "-") {
        write(std::cout);
      } else if (!path.empty()) {
        auto out = open_out(path);
        write(out);
      }
    };
    write_to(o->csv, [&](std::ostream& out) { report::write_conditions_csv(out, report); });
    write_to(o->calls_csv, [&](std::ostream& out) { report::write_calls_csv(out, report.calls); });
    write_to(o->json, [&](std::ostream& out) { out << report::to_json(report).dump(2) << "\n"; });
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
