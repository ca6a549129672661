#pragma once
// `kvbench capacity`: the largest number of conversations one managed server serves at once with
// its TTFT p90 under a limit. Each probed level is a run of its own (a fresh llama-server with
// -np N and -c N x ctx, or a fresh `ollama serve` with OLLAMA_NUM_PARALLEL=N; a few rounds of N
// concurrent calls) in a folder under the capacity folder, so every measured call is kept;
// capacity.json sums up the search as it goes.

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/load/capacity_boundary.h"
#include "harness/load/capacity_search.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario.h"

namespace kvbench::capacity {

struct CapacityRequest {
  // "ollama", or "openai" / "anthropic": a managed llama-server called through its
  // /v1/chat/completions or /v1/messages
  std::string kind = "llama-server";
  int ctx = 2048;                  // per conversation (num_ctx)
  std::string cache_type = "f16";  // -ctk/-ctv
  int prompt_tokens = 512;
  double ttft_p90_ms = 2000;  // the limit
  int max = 16;               // the largest level probed
  int rounds = 3;             // timed calls per level = rounds x level
  int max_tokens = 16;
  int replicates = 1;  // more measurements of the last passing and the first failing level
  std::string model = "synthetic:small";  // on Ollama: a model name the server has
  std::uint64_t seed = 42;
};

// The scenario that measures `level` conversations at once. Throws InputError naming the option
// when the request is not valid (a limit <= 0, max < 1, a prompt that does not fit ctx, a kind
// other than llama-server or ollama, a synthetic model on Ollama, ...).
scenario::Scenario capacity_level_scenario(const CapacityRequest& request, int level);

struct CapacityRun {
  std::filesystem::path dir;  // results_root/<UTC time>-capacity
  load::CapacityResult result;
  load::CapacityBoundary boundary;  // from every measurement, replicates pooled
  nlohmann::json summary;           // what capacity.json holds
};

// Runs the search (load::search_capacity), one run folder per probed level under a new
// capacity folder in options.results_root, and writes capacity.json there after every level.
// Checks the request before anything is created; throws Error when interrupted (what was
// measured stays on disk).
CapacityRun run_capacity(const CapacityRequest& request, const run::RunOptions& options);

}  // namespace kvbench::capacity
