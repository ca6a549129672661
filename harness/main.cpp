// kvbench: measures what long prompts cost a local LLM server.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/completion.h"
#include "harness/cli/kv_cmd.h"
#include "harness/cli/model_cmd.h"
#include "harness/cli/trace_cmd.h"
#include "harness/core/error.h"
#include "harness/core/version.h"
#include "harness/http/transport.h"
#include "harness/process/fd.h"
#include "harness/process/signals.h"

int main(int argc, char** argv) {
  // Named here, so --help shows "kvbench", not the path it was started by.
  CLI::App app{
      "kvbench: time-to-first-token, decode rate, KV-cache memory and prefix reuse of "
      "local LLM servers, measured with shuffled calls and fitted drift",
      "kvbench"};
  app.footer(
      "Examples:\n"
      "  kvbench run quickstart                           the default scenario, managed server\n"
      "  kvbench run scenarios/conversation.json          a scenario file\n"
      "  kvbench run s.json --url http://127.0.0.1:8080   attach to a running llama-server\n"
      "  kvbench report results/<run> --json -            a run's summary as JSON\n"
      "  kvbench compare results/<a> results/<b>          two runs side by side\n"
      "  kvbench gate scenarios/my-ab.json                the CI performance gate\n"
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
  app.set_version_flag("--version",
                       fmt::format("kvbench {} ({})", kvbench::kVersion, kvbench::kGitRevision));
  app.require_subcommand(1);
  // A call in flight ends as soon as Ctrl-C (or SIGTERM, SIGHUP) has arrived.
  kvbench::http::set_interrupt_check(&kvbench::process::stop_requested);
  kvbench::process::raise_open_file_limit();  // a socket per concurrent stream
  int exit_code = 0;
  kvbench::cli::setup_run_command(app, exit_code);
  kvbench::cli::setup_plan_command(app, exit_code);
  kvbench::cli::setup_report_command(app, exit_code);
  kvbench::cli::setup_gate_command(app, exit_code);
  kvbench::cli::setup_history_command(app, exit_code);
  kvbench::cli::setup_reproduce_command(app, exit_code);
  kvbench::cli::setup_capacity_command(app, exit_code);
  kvbench::cli::setup_compare_command(app, exit_code);
  kvbench::cli::setup_repeat_command(app, exit_code);
  kvbench::cli::setup_model_command(app);
  kvbench::cli::setup_kv_command(app);
  kvbench::cli::setup_trace_command(app);
  kvbench::cli::setup_completion_command(app);  // last: it walks the others
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const kvbench::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return exit_code;
}
