#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/data_files.h"
#include "harness/cli/output.h"
#include "harness/cli/scenario_flags.h"
#include "harness/core/error.h"
#include "harness/core/url.h"
#include "harness/plan/plan.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario.h"

namespace kvbench::cli {

void setup_plan_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string scenario;
    scenario::ScenarioEdits edits;
    std::vector<std::string> models;
    std::string url;
    std::string scenario_out;
    OutputOptions out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      app.add_subcommand("plan", "Print the expanded, shuffled plan without calling anything");
  cmd->add_option("scenario", o->scenario,
                  "Scenario file, or the name of a bundled one (without one, the quick start "
                  "edited by the flags)")
      ->type_name("FILE");
  add_scenario_flags(cmd, o->edits);
  cmd->add_option("--model", o->models,
                  "Model, as run takes it: a GGUF path, synthetic:<preset>, or an Ollama model "
                  "name; given twice or more, one variant per model")
      ->allow_extra_args(false)
      ->type_name("MODEL");
  cmd->add_option("--url", o->url,
                  "Plan for a server already running there (one start; nothing is contacted)")
      ->type_name("URL");
  cmd->add_option("--scenario-out", o->scenario_out,
                  "Write the scenario the flags made (resolved) to FILE")
      ->type_name("FILE");
  add_output_options(cmd, o->out, {"md", "json"});
  add_format_alias(cmd, o->out, "--json", "json", "Print the plan as JSON");
  cmd->callback([o, &exit_code] {
    const auto targets = resolve_outputs(o->out, {"md", "json"}, "plan");
    const auto edits = edits_with_models(o->edits, o->models);
    if (o->scenario.empty() && !edits.any() && o->models.empty() && o->url.empty()) {
      throw InputError(
          "kvbench plan: give a scenario file, or flags that edit the quick start "
          "(--prompt-tokens 256,1024, ...)");
    }
    run::RunOptions ro;
    ro.url = o->url;
    ro.model = o->models.size() == 1 ? o->models.front() : "";
    const auto s =
        run::with_overrides(scenario_with_flags(o->scenario, edits, !o->url.empty(), ro.model), ro);
    if (!s.server.managed() && !kind_stated(o->scenario, edits, s)) {
      fmt::print(stderr,
                 "plan: planned as {} (nothing is contacted: `kvbench run` asks the server at {} "
                 "what it is; --kind names it)\n",
                 scenario::to_string(s.server.kind), url_for_display(s.server.url));
    }
    if (!o->scenario_out.empty()) {
      write_scenario_out(o->scenario_out, s);
    }
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
