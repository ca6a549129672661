#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/data_files.h"
#include "harness/plan/plan.h"
#include "harness/scenario/scenario.h"

namespace kvbench::cli {

void setup_plan_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string scenario;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("plan", "Print the expanded, shuffled plan without calling anything");
  cmd->add_option("scenario", o->scenario, "Scenario file, or the name of a bundled one")
      ->type_name("FILE")
      ->required();
  cmd->add_flag("--json", o->json, "Print the plan as JSON");
  cmd->callback([o, &exit_code] {
    const auto s = scenario::load_scenario(scenario_argument(o->scenario));
    const auto p = plan::make_plan(s);
    if (o->json) {
      std::cout << plan::to_json(p).dump(2) << "\n";
    } else {
      std::cout << plan::describe(p);
    }
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
