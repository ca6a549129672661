#pragma once
// The concurrency section of a run's report: one row per block that ran calls concurrently (its
// "concurrency" statistics in run.json), with slots, calls, throughput and latency percentiles.
// Pure.

#include <ostream>

#include <nlohmann/json.hpp>

namespace kvbench::report {

// Writes "## Concurrency" and a table of every block of `run` that has "concurrency" statistics:
// block, variant (when any), num_ctx, cache, slots, calls ok / refused / failed, deferred,
// max in flight, prompt and decode tok/s, TTFT and inter-token p50 / p90 / p99. Writes nothing
// when no block has them.
void write_concurrency_markdown(std::ostream& out, const nlohmann::json& run);

}  // namespace kvbench::report
