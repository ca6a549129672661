#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/report/compare.h"
#include "harness/results/results.h"

namespace kvbench::cli {

namespace {
struct CompareCliOptions {
  std::string a;
  std::string b;
  OutputOptions out;
};
}  // namespace

void setup_compare_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CompareCliOptions>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Two run folders side by side: each condition's medians, B / A with a bootstrap interval, "
      "and what differs between the runs (descriptive, not a test: the gate is the test)");
  cmd->add_option("RUN_A", o->a, "The first run folder (A)")->required()->type_name("RUN_DIR");
  cmd->add_option("RUN_B", o->b, "The second run folder (B)")->required()->type_name("RUN_DIR");
  add_output_options(cmd, o->out, {"md", "json", "csv", "tsv"});
  add_output_alias(cmd, o->out, "--json", "json", "Also write the comparison as JSON to this file");
  cmd->callback([o, &exit_code] {
    const auto targets = resolve_outputs(o->out, {"md", "json", "csv", "tsv"}, "compare");
    const auto a = results::load_run(o->a);
    const auto b = results::load_run(o->b);
    for (const auto& w : a.warnings) {
      fmt::print(stderr, "warning: {}: {}\n", o->a, w);
    }
    for (const auto& w : b.warnings) {
      fmt::print(stderr, "warning: {}: {}\n", o->b, w);
    }
    const auto c = report::compare_runs(a, o->a, b, o->b);
    write_outputs(targets, [&](std::ostream& out, const std::string& format) {
      if (format == "md") {
        report::write_compare_markdown(out, c);
      } else if (format == "json") {
        out << report::to_json(c).dump(2) << "\n";
      } else {
        report::compare_table(c).write(out, format);
      }
    });
    exit_code = c.rows.empty() ? 1 : 0;
  });
}

}  // namespace kvbench::cli
