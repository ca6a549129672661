#pragma once
// The server's own counters (GET /metrics, scraped at the start and the end of each block) set
// beside the calls' per-call counts: a third, independent proof of prompt reuse. llama-server's
// llamacpp:prompt_tokens_total counts the prompt tokens it processed (not reused), which must
// equal the sum of the block's calls' prompt_n; vLLM's vllm:prefix_cache_hits_total and
// vllm:prefix_cache_queries_total count cached and queried prompt tokens, against the calls'
// cached and prompt tokens.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/results/manifest.h"

namespace kvbench::analysis {

// The sum of every series of metric `name` (all label sets) in {series: value}; nullopt when
// there is none. Pure.
std::optional<double> metric_sum(const std::map<std::string, double>& samples,
                                 std::string_view name);

struct CounterCheck {
  int block = 0;
  std::string metric;      // e.g. "llamacpp:prompt_tokens_total"
  std::string what;        // what it counts
  std::string calls_what;  // the per-call figure summed against it
  double server = 0;       // the counter's change over the block
  long long calls = 0;     // the same figure summed over the block's calls
  bool agree() const;      // equal once the counter is rounded
};

// One check per block and known counter, for blocks whose run.json entry has
// "server_counters" {"at_start", "at_end"} with samples. Pure.
std::vector<CounterCheck> check_counters(const results::RunManifest& run,
                                         const std::vector<CallRecord>& calls);

nlohmann::json to_json(const CounterCheck& c);

}  // namespace kvbench::analysis
