#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"
#include "harness/cli/commands.h"
#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/report/capacity.h"
#include "harness/report/effects.h"
#include "harness/report/memory.h"
#include "harness/report/prefix.h"
#include "harness/report/summary.h"
#include "harness/results/results.h"

namespace kvbench::cli {

namespace {

struct ReportOptions {
  std::string run_dir;
  std::string calls_csv;
  OutputOptions out;
};

// A `kvbench capacity` folder's report: its summary as Markdown or JSON.
void report_capacity(const ReportOptions& o, const std::filesystem::path& capacity) {
  if (!o.calls_csv.empty()) {
    throw InputError(fmt::format(
        "{}: a capacity folder has no per-call table: --calls-csv applies to run folders "
        "(its levels are run folders: report one of them)",
        o.run_dir));
  }
  std::vector<OutputTarget> targets;
  try {
    targets = resolve_outputs(o.out, {"md", "json"}, "report");
  } catch (const InputError& e) {
    throw InputError(fmt::format(
        "{}: a capacity folder has no per-condition or per-call table, only md and json (its "
        "levels are run folders: report one of them): {}",
        o.run_dir, e.what()));
  }
  std::ifstream in(capacity);
  const auto summary = nlohmann::json::parse(in, nullptr, false);
  if (summary.is_discarded()) {
    throw InputError(fmt::format("{}: not valid JSON", capacity.string()));
  }
  write_outputs(targets, [&](std::ostream& out, const std::string& format) {
    if (format == "json") {
      out << summary.dump(2) << "\n";
    } else {
      report::write_capacity_markdown(out, summary);
    }
  });
}

void run_report(const ReportOptions& o) {
  const std::filesystem::path capacity = std::filesystem::path(o.run_dir) / "capacity.json";
  if (std::filesystem::exists(capacity)) {
    report_capacity(o, capacity);
    return;
  }
  auto targets = resolve_outputs(o.out, report::report_formats(), "report");
  if (!o.calls_csv.empty()) {
    if (o.calls_csv == "-") {
      // Alone on stdout, as before, unless another output was sent there.
      const bool asked = !o.out.files.empty() || !o.out.format.empty() ||
                         std::any_of(o.out.aliases.begin(), o.out.aliases.end(),
                                     [](const auto& a) { return a.path == "-"; });
      if (asked && std::any_of(targets.begin(), targets.end(),
                               [](const auto& t) { return t.path == "-"; })) {
        throw InputError("kvbench report: stdout (-) can carry one output only");
      }
      std::erase_if(targets, [](const auto& t) { return t.path == "-"; });
    }
    targets.push_back({o.calls_csv, "calls-csv"});
  }
  const auto loaded = results::load_run(o.run_dir);
  for (const auto& w : loaded.warnings) {
    fmt::print(stderr, "warning: {}\n", w);
  }
  const auto report =
      report::build_report(loaded.run, loaded.calls, loaded.warnings, loaded.answers);
  write_outputs(targets, [&](std::ostream& out, const std::string& format) {
    if (format == "calls-csv") {
      report::write_calls_csv(out, report.calls);
    } else {
      report::write_report(out, report, format);
    }
  });
}

}  // namespace

void setup_report_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Summarise a run folder (works offline)");
  cmd->add_option("run_dir", o->run_dir, "Run folder (results/<run>)")
      ->required()
      ->type_name("RUN_DIR");
  cmd->footer(
      "Formats: md the report; json its summary (kvbench.report); csv and tsv the per-condition "
      "table; jsonl one record per call. A capacity folder has md and json.");
  add_output_options(cmd, o->out, report::report_formats());
  add_output_alias(cmd, o->out, "--csv", "csv", "Write the per-condition table as CSV");
  add_output_alias(cmd, o->out, "--json", "json", "Write the summary as JSON");
  cmd->add_option("--calls-csv", o->calls_csv, "Write one CSV row per call (- for stdout)")
      ->type_name("FILE")
      ->group("Output");
  cmd->callback([o, &exit_code] {
    run_report(*o);
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
