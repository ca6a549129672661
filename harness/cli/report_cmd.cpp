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
  cmd->add_option("run_dir", o->run_dir, "Run folder (results/<run>)")->required();
  cmd->add_option("--csv", o->csv, "Write the per-condition table as CSV");
  cmd->add_option("--calls-csv", o->calls_csv, "Write one CSV row per call");
  cmd->add_option("--json", o->json, "Write the summary as JSON");
  cmd->callback([o, &exit_code] {
    const std::filesystem::path capacity = std::filesystem::path(o->run_dir) / "capacity.json";
    if (std::filesystem::exists(capacity)) {  // a `kvbench capacity` folder
      std::ifstream in(capacity);
      report::write_capacity_markdown(std::cout, nlohmann::json::parse(in));
      exit_code = 0;
      return;
    }
    const auto loaded = results::load_run(o->run_dir);
    for (const auto& w : loaded.warnings) {
      fmt::print(stderr, "warning: {}\n", w);
    }
    const auto report =
        report::build_report(loaded.run, loaded.calls, loaded.warnings, loaded.answers);
    report::write_markdown(std::cout, report);
    if (!o->csv.empty()) {
      auto out = open_out(o->csv);
      report::write_conditions_csv(out, report);
    }
    if (!o->calls_csv.empty()) {
      auto out = open_out(o->calls_csv);
      report::write_calls_csv(out, report.calls);
    }
    if (!o->json.empty()) {
      auto out = open_out(o->json);
      out << report::to_json(report).dump(2) << "\n";
    }
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
