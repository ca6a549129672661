#include "harness/cli/app.h"

#include <sstream>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/completion.h"
#include "harness/cli/kv_cmd.h"
#include "harness/cli/model_cmd.h"
#include "harness/cli/trace_cmd.h"
#include "harness/core/version.h"

namespace kvbench::cli {

void setup_app(CLI::App& app, int& exit_code) {
  app.description(
      "kvbench: time-to-first-token, decode rate, KV-cache memory and prefix reuse of "
      "local LLM servers, measured with shuffled calls and fitted drift");
  app.footer(
      "Examples:\n"
      "  kvbench run quickstart                           the default scenario, managed server\n"
      "  kvbench run scenarios/conversation.json          a scenario file\n"
      "  kvbench run s.json --url http://127.0.0.1:8080   attach to a running llama-server\n"
      "  kvbench report results/<run> --format json       a run's summary as JSON\n"
      "  kvbench report results/<run> -o page.html        a run's page, with its plots\n"
      "  kvbench compare results/<a> results/<b>          two runs side by side\n"
      "  kvbench gate scenarios/gate-ab.json              the CI performance gate\n"
      "  kvbench trace analyze trace.jsonl                a trace's prefix reuse, no server\n"
      "\n"
      "Exit codes: 0 done; 1 an error, a run stopped incomplete, or the gate failed; 2 bad input\n"
      "(nothing was started); 3 a run short of its plan, or the gate inconclusive; 130\n"
      "interrupted (Ctrl-C).\n"
      "\n"
      "Environment: KVBENCH_LLAMA_SERVER and KVBENCH_OLLAMA (the server binaries, unless\n"
      "--server-bin; else llama-server from .deps above the binary, $XDG_DATA_HOME/kvbench or\n"
      "PATH), KVBENCH_MODELS_DIR (synthetic models; else $XDG_CACHE_HOME/kvbench/models\n"
      "or ~/.cache/kvbench/models), the variable server.api_key_env names (an API key, read\n"
      "only from there), GITHUB_STEP_SUMMARY (the gate appends its verdict).\n");
  app.set_version_flag("--version", fmt::format("kvbench {} ({})", kVersion, kGitRevision));
  app.require_subcommand(1);
  setup_run_command(app, exit_code);
  setup_plan_command(app, exit_code);
  setup_report_command(app, exit_code);
  setup_gate_command(app, exit_code);
  setup_history_command(app, exit_code);
  setup_reproduce_command(app, exit_code);
  setup_capacity_command(app, exit_code);
  setup_compare_command(app, exit_code);
  setup_repeat_command(app, exit_code);
  setup_model_command(app);
  setup_kv_command(app);
  setup_trace_command(app);
  setup_completion_command(app);  // last: it walks the others
}

void disarm(CLI::App& app) {
  // The top level's parse-complete callback runs after every option is processed and before any
  // subcommand's callback.
  app.parse_complete_callback([] { throw CheckedOnly{}; });
}

std::vector<std::string> help_examples(const CLI::App& app) {
  std::vector<std::string> out;
  std::vector<const CLI::App*> apps{&app};
  for (std::size_t i = 0; i < apps.size(); ++i) {
    std::istringstream in(apps[i]->get_footer());
    std::string line;
    while (std::getline(in, line)) {
      const auto start = line.find_first_not_of(' ');
      if (start != std::string::npos && line.compare(start, 8, "kvbench ") == 0) {
        // The explanation follows after a run of spaces.
        const auto gap = line.find("   ", start);
        out.push_back(line.substr(start, gap == std::string::npos ? gap : gap - start));
      }
    }
    for (const CLI::App* sub : apps[i]->get_subcommands({})) {
      apps.push_back(sub);
    }
  }
  return out;
}

}  // namespace kvbench::cli
