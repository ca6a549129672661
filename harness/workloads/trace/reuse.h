#pragma once
// What each request of a replay could reuse, as pure functions of the trace: under an infinite
// cache (every block sent earlier in this replay is still there) and under a block LRU of a given
// capacity, and the run-level hit rates under three definitions that are never shown without
// their names: the same reuse is 36.6 % by blocks, 37.4 % by tokens and 38.4 % as a mean of
// per-request rates on Mooncake's conversation trace.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/workloads/trace/select.h"
#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads::trace {

// A request's reusable prefix: its leading blocks found in the cache, and their tokens
// (blocks x block size, but never more than its input: a hit on a partial last block reuses the
// whole prompt).
struct Reuse {
  int blocks = 0;
  long long tokens = 0;
};

// Per request, in trace order: the longest prefix of its blocks that every earlier request of
// `trace` sent between them (prefix reuse only: a block past the first miss counts for nothing).
std::vector<Reuse> infinite_reuse(const Trace& trace);

// Per request, in trace order, under a block LRU holding at most `capacity_blocks` blocks: a
// request reuses the longest prefix of its blocks present before it is sent; then its blocks
// become the most recently used, its first block the most recent of all (they are touched last
// block first, so that a request's own tail is evicted before its prefix, as vLLM frees a
// request's blocks), and the least recently used beyond the capacity are evicted.
std::vector<Reuse> lru_reuse(const Trace& trace, std::size_t capacity_blocks);

// A hit rate with its definition's name beside the number. Names: "blocks" (reused blocks /
// blocks sent), "tokens" (reused tokens / input tokens), "per_request_mean" (the mean over
// requests of each request's reused blocks / its blocks; requests without blocks left out).
struct HitRate {
  std::string_view name;
  std::string_view definition;
  double rate = 0;  // 0 to 1; 0 when nothing was sent
};

struct HitRates {
  HitRate blocks;
  HitRate tokens;
  HitRate per_request_mean;
};

// The three hit rates of `reuse` (one entry per request of `trace`, as the functions above
// return it).
HitRates hit_rates(const Trace& trace, const std::vector<Reuse>& reuse);

// For each request of at least two blocks whose first two blocks an earlier request had too:
// how many requests back the latest such request is (1 = the one just before), in trace order.
std::vector<std::size_t> family_predecessor_distances(const Trace& trace);

}  // namespace kvbench::workloads::trace
