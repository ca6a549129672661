#pragma once
// The options every command that starts or attaches to servers shares: where results go, which
// server binary, model and URL, where synthetic models live, and whether progress is shown.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/run/progress.h"
#include "harness/run/runner.h"

namespace kvbench::cli {

struct ServerCliOptions {
  std::string results = "results";
  std::string server_bin;
  std::vector<std::string> models;  // --model, repeatable: two or more make variants
  std::string url;
  std::string models_dir;
  int start_timeout_s = 300;
  std::vector<std::string> labels;  // --label k=v, as given
  bool force = false;               // --force: start a managed server whose plan exceeds the memory
  bool quiet = false;
  bool verbose = false;        // -v: a line per call on a terminal too
  std::string color = "auto";  // --color auto|always|never
};

// On a terminal (stderr, TERM not "dumb"): one progress line redrawn in place unless `verbose`,
// and colour unless `color` is "never" or NO_COLOR is set; "always" colours anywhere.
run::ProgressStyle progress_style(bool quiet, bool verbose, const std::string& color);

// How long a managed server may take to answer its readiness check (seconds).
inline constexpr int kMaxStartTimeoutS = 3600;

// Registers --results (described by `results_help`), --server-bin, --models-dir, --start-timeout,
// --label and -q; with
// `model_and_url` also --model and --url.
void add_server_options(CLI::App* cmd, ServerCliOptions& o, const std::string& results_help,
                        bool model_and_url = true);

// Registers -q, -v and --color.
void add_progress_options(CLI::App* cmd, bool& quiet, bool& verbose, std::string& color);

// The run options these stand for. Throws InputError for a --label that is not NAME=VALUE (a name
// of letters, digits, '_', '.' and '-', at most 64 characters; a value of 1 to 256 printable
// characters) or a name given twice.
run::RunOptions to_run_options(const ServerCliOptions& o);

}  // namespace kvbench::cli
