#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/data_files.h"
#include "harness/cli/output.h"
#include "harness/plan/plan.h"
#include "harness/scenario/scenario.h"

namespace kvbench::cli {

void setup_plan_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string scenario;
    OutputOptions out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("plan", "Print the expanded, shuffled plan without calling anything");
  cmd->add_option("scenario", o->scenario, "Scenario file, or the name of a bundled one")
      ->type_name("FILE")
      ->required();
  add_output_options(cmd, o->out, {"md", "json"});
  add_format_alias(cmd, o->out, "--json", "json", "Print the plan as JSON");
  cmd->callback([o, &exit_code] {
    const auto targets = resolve_outputs(o->out, {"md", "json"}, "plan");
    const auto s = scenario::load_scenario(scenario_argument(o->scenario));
    const auto p = plan::make_plan(s);
    write_outputs(targets, [&](std::ostream& out, const std::string& format) {
      if (format == "json") {
        nlohmann::json j = {{"schema", "kvbench.plan"}, {"schema_version", 1}};
        j.update(plan::to_json(p));
        out << j.dump(2) << "\n";
      } else {
        out << plan::describe(p);
      }
    });
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
