#pragma once
// Runs a scenario: one server per block (managed or attached), every call streamed, timed and
// appended to calls.jsonl as it completes.

#include <chrono>
#include <filesystem>
#include <string>

#include "harness/scenario/scenario.h"

namespace kvbench::run {

struct RunOptions {
  std::filesystem::path results_root = "results";
  std::string server_binary;         // overrides server.binary and the search
  std::string model;                 // overrides server.model
  std::string url;                   // overrides server.url (attach)
  std::filesystem::path models_dir;  // where synthetic models are written; empty = default
  bool progress = true;              // a progress line on stderr per call
  std::chrono::seconds ready_timeout{300};
};

struct RunSummary {
  std::filesystem::path run_dir;
  int calls = 0;
  int failed = 0;
  int flagged = 0;
  bool complete = false;
};

// Applies the option overrides to a scenario (url, model, binary).
scenario::Scenario with_overrides(scenario::Scenario s, const RunOptions& options);

// Finds llama-server: `explicit_path` if given, else $KVBENCH_LLAMA_SERVER, else
// .deps/llama/bin/llama-server above the kvbench executable, else llama-server on PATH.
// Throws InputError naming what was tried.
std::string find_llama_server(const std::string& explicit_path);

// The default folder for synthetic models: $KVBENCH_MODELS_DIR, else $XDG_CACHE_HOME/kvbench/
// models, else ~/.cache/kvbench/models.
std::filesystem::path default_models_dir();

// A GGUF path for `model`: "synthetic:<preset>" is written once into `models_dir` (seeded,
// reused afterwards); a path must be a readable GGUF file. Throws InputError otherwise.
std::string resolve_model(const std::string& model, const std::filesystem::path& models_dir);

// Runs the whole plan. Setup failures throw before anything is written; afterwards server
// failures are recorded on their calls and the run goes on.
RunSummary run_scenario(const scenario::Scenario& s, const RunOptions& options);

// Completes an interrupted run in its folder: the calls not yet recorded, in the original
// shuffled order, with the run's own id (so every nonce stays unique). A truncated last line of
// calls.jsonl is cut off first. Throws InputError when the folder is no kvbench run or its plan
// no longer matches its scenario.
RunSummary resume_run(const std::filesystem::path& run_dir, const RunOptions& options);

// Adds `extra_sets` counterbalanced block sets of every variant (ABBA...) to a finished run of a
// scenario with variants, and runs them into the same folder with the run's own id (the plan of
// the earlier sets stays as it was). Throws InputError when the folder is no kvbench run, its
// scenario has no variants, or extra_sets < 1.
RunSummary extend_run(const std::filesystem::path& run_dir, int extra_sets,
                      const RunOptions& options);

}  // namespace kvbench::run
