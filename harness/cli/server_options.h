#pragma once
// The options every command that starts or attaches to servers shares: where results go, which
// server binary, model and URL, where synthetic models live, and whether progress is shown.

#include <string>

#include <CLI/CLI.hpp>

#include "harness/run/runner.h"

namespace kvbench::cli {

struct ServerCliOptions {
  std::string results = "results";
  std::string server_bin;
  std::string model;
  std::string url;
  std::string models_dir;
  bool quiet = false;
};

// Registers --results (described by `results_help`), --server-bin, --models-dir and -q; with
// `model_and_url` also --model and --url.
void add_server_options(CLI::App* cmd, ServerCliOptions& o, const std::string& results_help,
                        bool model_and_url = true);

// The run options these stand for.
run::RunOptions to_run_options(const ServerCliOptions& o);

}  // namespace kvbench::cli
