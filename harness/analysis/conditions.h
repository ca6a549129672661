#pragma once
// Per-condition summaries of a run's fresh timed reads (quartiles of every metric, failures,
// flags, the largest reuse) and the check of the server's reported prompt reuse against the
// prediction. Pure: records in, summaries out.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/record.h"

namespace kvbench::analysis {

// Median and quartiles of one metric (type-7 percentiles); n = 0 when no call had a value.
struct Quartiles {
  std::size_t n = 0;
  double q1 = 0;
  double median = 0;
  double q3 = 0;
};
Quartiles quartiles(std::vector<double> values);

struct ConditionSummary {
  std::string variant;  // empty unless the run compares server variants
  int num_ctx = 0;
  std::string cache_type;
  std::optional<int> batch_size;  // where factors.batch_size varies it (the server's batch)
  std::optional<int> ubatch_size;
  int prompt_tokens = 0;
  int calls = 0;   // timed calls planned and recorded
  int failed = 0;  // of those, not ok
  Quartiles ttft_ms;
  Quartiles server_prompt_ms;
  Quartiles decode_tps;
  Quartiles server_decode_tps;
  int max_cache_n = 0;
  int flagged = 0;
  // The quartiles of an analysis::metrics() key ("ttft_ms", ...); nullptr for another key.
  const Quartiles* of(std::string_view metric) const;
  Quartiles* of(std::string_view metric);
};

// Groups the fresh timed reads (analysis::fresh_timed) by (variant, num_ctx, cache_type, batch
// sizes, prompt_tokens), in ascending order.
std::vector<ConditionSummary> summarize_conditions(const std::vector<CallRecord>& calls);

struct CacheCheck {
  int timed_ok = 0;          // timed calls with a reported cache_n
  int predicted = 0;         // of those, calls with a prediction (the server gave token ids)
  int matched_expected = 0;  // cache_n equal to the shared-prefix prediction
  int max_cache_n = 0;
  int prompt_cache_hits = 0;  // flagged: reuse reached past the unique first line
  int unexpected = 0;         // flagged: more reuse than the shared prefix allows
};
CacheCheck check_cache(const std::vector<CallRecord>& calls);

}  // namespace kvbench::analysis
