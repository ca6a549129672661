// kvbench: measures what long prompts cost a local LLM server.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/kv_cmd.h"
#include "harness/cli/model_cmd.h"
#include "harness/core/error.h"
#include "harness/core/version.h"
#include "harness/http/transport.h"
#include "harness/process/fd.h"
#include "harness/process/signals.h"

int main(int argc, char** argv) {
  CLI::App app{
      "kvbench: time-to-first-token, decode rate, KV-cache memory and prefix reuse of "
      "local LLM servers, measured with shuffled calls and fitted drift"};
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
  kvbench::cli::setup_model_command(app);
  kvbench::cli::setup_kv_command(app);
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
