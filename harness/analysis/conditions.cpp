#include "harness/analysis/conditions.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "harness/analysis/analysis.h"
#include "harness/stats/descriptive.h"

namespace kvbench::analysis {

Quartiles quartiles(std::vector<double> values) {
  Quartiles q;
  q.n = values.size();
  if (values.empty()) {
    return q;
  }
  std::sort(values.begin(), values.end());
  q.q1 = stats::percentile_sorted(values, 0.25);
  q.median = stats::percentile_sorted(values, 0.5);
  q.q3 = stats::percentile_sorted(values, 0.75);
  return q;
}

namespace {

bool is_timed(const CallRecord& r) {
  return r.kind == CallKind::timed;
}

template <typename F>
std::vector<double> collect(const std::vector<const CallRecord*>& rs, F&& get) {
  std::vector<double> out;
  for (const auto* r : rs) {
    if (auto v = get(*r)) {
      out.push_back(*v);
    }
  }
  return out;
}

}  // namespace

namespace {

template <typename Summary>
auto* quartiles_of(Summary& c, std::string_view metric) {
  return metric == "ttft_ms"             ? &c.ttft_ms
         : metric == "server_prompt_ms"  ? &c.server_prompt_ms
         : metric == "decode_tps"        ? &c.decode_tps
         : metric == "server_decode_tps" ? &c.server_decode_tps
                                         : nullptr;
}

}  // namespace

const Quartiles* ConditionSummary::of(std::string_view metric) const {
  return quartiles_of(*this, metric);
}

Quartiles* ConditionSummary::of(std::string_view metric) {
  return quartiles_of(*this, metric);
}

std::vector<ConditionSummary> summarize_conditions(const std::vector<CallRecord>& calls) {
  using Key =
      std::tuple<std::string, int, std::string, std::optional<int>, std::optional<int>, int>;
  std::map<Key, std::vector<const CallRecord*>> groups;
  for (const auto& r : calls) {
    if (analysis::fresh_timed(r)) {
      groups[{r.variant, r.num_ctx, r.cache_type, r.batch_size, r.ubatch_size, r.prompt_tokens}]
          .push_back(&r);
    }
  }
  std::vector<ConditionSummary> out;
  for (const auto& [key, rs] : groups) {
    ConditionSummary c;
    std::tie(c.variant, c.num_ctx, c.cache_type, c.batch_size, c.ubatch_size, c.prompt_tokens) =
        key;
    c.calls = static_cast<int>(rs.size());
    std::vector<const CallRecord*> ok;
    for (const auto* r : rs) {
      (r->ok() ? ok.push_back(r) : void(++c.failed));
      c.flagged += r->flags.empty() ? 0 : 1;
      c.max_cache_n = std::max(c.max_cache_n, r->server.cache_n.value_or(0));
    }
    for (const auto& m : analysis::metrics()) {
      *c.of(m.key) = quartiles(collect(ok, m.value));
    }
    out.push_back(std::move(c));
  }
  return out;
}

CacheCheck check_cache(const std::vector<CallRecord>& calls) {
  CacheCheck c;
  for (const auto& r : calls) {
    if (!is_timed(r) || !r.ok() || !r.server.cache_n) {
      continue;
    }
    ++c.timed_ok;
    c.max_cache_n = std::max(c.max_cache_n, *r.server.cache_n);
    c.predicted += r.expected_cache_n ? 1 : 0;
    c.matched_expected += r.expected_cache_n == r.server.cache_n ? 1 : 0;
    const auto has = [&](const char* f) {
      return std::find(r.flags.begin(), r.flags.end(), f) != r.flags.end();
    };
    c.prompt_cache_hits += has("prompt_cache_hit") ? 1 : 0;
    c.unexpected += has("unexpected_cache_reuse") ? 1 : 0;
  }
  return c;
}

}  // namespace kvbench::analysis
