#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "harness/capacity/capacity_run.h"
#include "harness/cli/commands.h"
#include "harness/cli/output.h"
#include "harness/cli/server_options.h"
#include "harness/core/error.h"
#include "harness/process/signals.h"
#include "harness/report/capacity.h"

namespace kvbench::cli {

namespace {
struct CapacityCliOptions {
  capacity::CapacityRequest request;
  ServerCliOptions server;
  OutputOptions out;
};

void add_request_options(CLI::App* cmd, capacity::CapacityRequest& r) {
  cmd->add_option("--kind", r.kind,
                  "Server kind: llama-server, ollama (a managed ollama serve), openai or anthropic "
                  "(a managed llama-server called through /v1/chat/completions or /v1/messages)")
      ->capture_default_str();
  cmd->add_option("--ctx,--num-ctx", r.ctx, "Context per conversation (num_ctx), tokens")
      ->capture_default_str();
  cmd->add_option("--cache-type", r.cache_type,
                  "KV cache type (-ctk/-ctv, or OLLAMA_KV_CACHE_TYPE)")
      ->capture_default_str();
  cmd->add_option("--prompt-tokens", r.prompt_tokens, "Prompt length of every call")
      ->capture_default_str();
  cmd->add_option("--ttft-p90-ms", r.ttft_p90_ms, "The limit the TTFT p90 must stay under")
      ->capture_default_str();
  cmd->add_option("--max", r.max, "The largest number of conversations probed")
      ->capture_default_str();
  cmd->add_option("--rounds", r.rounds, "Timed calls per level: rounds x conversations")
      ->capture_default_str();
  cmd->add_option("--max-tokens", r.max_tokens, "Tokens generated per call")->capture_default_str();
  cmd->add_option("--replicates", r.replicates,
                  "More measurements of the last passing and the first failing level, for the "
                  "boundary's CI (0 to 10)")
      ->capture_default_str();
  cmd->add_option("--model", r.model,
                  "A GGUF path or synthetic:<preset>; with --kind ollama, an Ollama model name")
      ->capture_default_str();
  cmd->add_option("--seed", r.seed, "Seed of each level's plan")->capture_default_str();
}
}  // namespace

void setup_capacity_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CapacityCliOptions>();
  auto* cmd = app.add_subcommand(
      "capacity",
      "Find the most conversations a managed llama-server (or ollama serve) serves at once with "
      "TTFT p90 under a limit (doubling, then bisection; one fresh server per level)");
  add_request_options(cmd, o->request);
  add_server_options(cmd, o->server, "Folder the capacity folder is created in", false);
  add_output_options(cmd, o->out, {"md", "json"});
  cmd->callback([o, &exit_code] {
    const auto targets = resolve_outputs(o->out, {"md", "json"}, "capacity");
    const run::RunOptions ro = to_run_options(o->server);
    process::install_signal_handlers();
    const auto result = capacity::run_capacity(o->request, ro);
    std::ostringstream md;
    report::write_capacity_markdown(md, result.summary);
    std::ofstream(result.dir / "capacity.md") << md.str();
    write_outputs(targets, [&](std::ostream& out, const std::string& format) {
      if (format == "json") {
        out << result.summary.dump(2) << "\n";
      } else {
        out << md.str();
      }
    });
    fmt::print(stderr, "results: {}\n", result.dir.string());
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
