#pragma once
// What a block of concurrent calls adds up to: aggregate throughput over the block's busy span,
// TTFT and inter-token latency percentiles, and the calls refused. Pure: records in, statistics
// out.

#include <optional>
#include <vector>

#include "harness/core/record.h"
#include "harness/results/block_facts.h"

namespace kvbench::load {

// p50, p90, p99 (type 7) and n of `values`; nullopt when empty.
std::optional<results::Percentiles> percentiles(std::vector<double> values);

// Over the timed calls of one block (warm-up calls and probes are left out):
//   calls, ok, refused (HTTP 503/429/529 or no connection), failed (any other fault);
//   span_s: first send to last end; prompt_tok_per_s: the server's prompt tokens read (prompt_n,
//   else the counted prompt) per second of span; decode_tok_per_s: generated tokens seen per
//   second of span; max_in_flight; ttft_ms and itl_ms (the gap between consecutive token events
//   of a call) as percentiles, empty without data. Percentiles are type 7.
results::ConcurrencyStats block_stats(const std::vector<CallRecord>& records);

}  // namespace kvbench::load
