#pragma once
// `kvbench trace merge RUN...`: the shards of one trace replay (kvbench run --trace-shard K/N on
// N hosts) joined into one per-request table, in the one-host replay's order, with the hit rates
// of the whole and what crossed shards: the blocks that families on different hosts share, and
// the infinite-cache reuse one host would have had from them (each row's crossed_tokens: its
// one-host infinite reuse less its shard's).

#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace kvbench::cli {

// The merge as one JSON document (kvbench.trace-merge v1). InputError for a run that is no trace
// replay, shards of other replays or of other counts, or a shard given twice.
nlohmann::json merge_trace_shards(const std::vector<std::string>& run_dirs);

void write_trace_merge_markdown(std::ostream& out, const nlohmann::json& merged);

// Registers `merge` under `trace`.
void add_trace_merge(CLI::App& trace);

}  // namespace kvbench::cli
