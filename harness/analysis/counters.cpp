#include "harness/analysis/counters.h"

#include <cmath>

namespace kvbench::analysis {

using nlohmann::json;

namespace {

std::string_view series_name(std::string_view series) {
  const auto brace = series.find('{');
  return brace == std::string_view::npos ? series : series.substr(0, brace);
}

}  // namespace

std::optional<double> metric_sum(const std::map<std::string, double>& samples,
                                 std::string_view name) {
  std::optional<double> sum;
  for (const auto& [series, value] : samples) {
    if (series_name(series) == name) {
      sum = sum.value_or(0.0) + value;
    }
  }
  return sum;
}

bool CounterCheck::agree() const {
  return std::llround(server) == calls;
}

std::vector<CounterCheck> check_counters(const results::RunManifest& run,
                                         const std::vector<CallRecord>& calls) {
  std::vector<CounterCheck> out;
  for (const auto& b : run.blocks) {
    if (!b.server_counters || b.server_counters->at_start.error ||
        b.server_counters->at_end.error) {
      continue;
    }
    const auto& start = b.server_counters->at_start.samples;
    const auto& end = b.server_counters->at_end.samples;
    long long prompt_n = 0;
    long long cache_n = 0;
    long long prompt_tokens = 0;
    for (const auto& r : calls) {
      if (r.block != b.index) {
        continue;
      }
      prompt_n += r.server.prompt_n.value_or(0);
      cache_n += r.server.cache_n.value_or(0);
      prompt_tokens += r.server.prompt_n.value_or(0) + r.server.cache_n.value_or(0);
    }
    const auto add = [&](const char* metric, const char* what, const char* calls_what,
                         long long from_calls) {
      const auto x = metric_sum(start, metric);
      const auto y = metric_sum(end, metric);
      if (x && y) {
        out.push_back({b.index, metric, what, calls_what, *y - *x, from_calls});
      }
    };
    add("llamacpp:prompt_tokens_total", "prompt tokens processed, not reused", "prompt_n",
        prompt_n);
    add("vllm:prefix_cache_hits_total", "prompt tokens served from the prefix cache",
        "cached tokens", cache_n);
    add("vllm:prefix_cache_queries_total", "prompt tokens looked up", "prompt tokens",
        prompt_tokens);
  }
  return out;
}

json to_json(const CounterCheck& c) {
  return {{"block", c.block},   {"metric", c.metric},         {"what", c.what},
          {"server", c.server}, {"calls_what", c.calls_what}, {"calls", c.calls},
          {"agree", c.agree()}};
}

}  // namespace kvbench::analysis
