#pragma once
// The concurrency section of a run's report: one row per block that ran calls concurrently (its
// "concurrency" statistics in run.json), with slots, calls, throughput and latency percentiles.
// Pure.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/results/manifest.h"

namespace kvbench::report {

// Writes "## Concurrency" and a table of every block of `run` that has "concurrency" statistics:
// block, variant (when any), num_ctx, cache, slots, calls ok / refused / failed, deferred,
// max in flight, prompt and decode tok/s, TTFT and inter-token p50 / p90 / p99; then one line
// per block with a "server_queue" (Ollama, see queue_sentence). Writes nothing when no block has
// them.
void write_concurrency_markdown(std::ostream& out, const results::RunManifest& run);

// What a block's "server_queue" found, as a sentence naming the block: how many calls waited
// inside the server and for how long, the most it served at once against the most in flight,
// what that says about OLLAMA_NUM_PARALLEL ("num_parallel" of the block: set by kvbench, or
// null when attached), and the load_duration Ollama reported for the waits. Empty without one.
std::string queue_sentence(const results::BlockInfo& block);

}  // namespace kvbench::report
