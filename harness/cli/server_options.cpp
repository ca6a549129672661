#include "harness/cli/server_options.h"

namespace kvbench::cli {

void add_server_options(CLI::App* cmd, ServerCliOptions& o, const std::string& results_help,
                        bool model_and_url) {
  cmd->add_option("--results", o.results, results_help)->capture_default_str();
  cmd->add_option("--server-bin", o.server_bin, "llama-server or ollama executable (managed mode)");
  if (model_and_url) {
    cmd->add_option("--model", o.model,
                    "Model: a GGUF path, synthetic:<preset>, or an Ollama model name");
    cmd->add_option("--url", o.url, "Attach to a running server at this URL instead");
  }
  cmd->add_option("--models-dir", o.models_dir, "Where synthetic models are written");
  cmd->add_option("--start-timeout", o.start_timeout_s,
                  "Seconds a managed server may take to become ready (1 to 3600); one that is "
                  "not ready by then is stopped and its block recorded as never started")
      ->check(CLI::Range(1, kMaxStartTimeoutS))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "No progress lines on stderr");
}

run::RunOptions to_run_options(const ServerCliOptions& o) {
  run::RunOptions ro;
  ro.results_root = o.results;
  ro.server_binary = o.server_bin;
  ro.model = o.model;
  ro.url = o.url;
  ro.models_dir = o.models_dir;
  ro.progress = !o.quiet;
  ro.ready_timeout = std::chrono::seconds(o.start_timeout_s);
  return ro;
}

}  // namespace kvbench::cli
