#include "harness/load/block_stats.h"

#include <algorithm>
#include <limits>

#include "harness/stats/descriptive.h"

namespace kvbench::load {

namespace {

bool refused(const CallRecord& r) {
  return r.outcome == Outcome::connect_error ||
         (r.http_status &&
          (*r.http_status == 503 || *r.http_status == 429 || *r.http_status == 529));
}

}  // namespace

std::optional<results::Percentiles> percentiles(std::vector<double> values) {
  if (values.empty()) {
    return std::nullopt;
  }
  std::sort(values.begin(), values.end());
  return results::Percentiles{stats::percentile_sorted(values, 0.50),
                              stats::percentile_sorted(values, 0.90),
                              stats::percentile_sorted(values, 0.99), values.size()};
}

results::ConcurrencyStats block_stats(const std::vector<CallRecord>& records) {
  int calls = 0;
  int ok = 0;
  int refused_n = 0;
  int max_in_flight = 0;
  double begin_s = std::numeric_limits<double>::max();
  double end_s = 0;
  double prompt_tokens = 0;
  double decode_tokens = 0;
  std::vector<double> ttft;
  std::vector<double> itl;
  for (const auto& r : records) {
    if (r.kind != CallKind::timed) {
      continue;
    }
    ++calls;
    refused_n += refused(r) ? 1 : 0;
    max_in_flight = std::max(max_in_flight, r.in_flight.value_or(1));
    begin_s = std::min(begin_s, r.t_start_s);
    end_s = std::max(end_s, r.t_start_s + r.client.e2e_ms.value_or(0) / 1000.0);
    if (!r.ok()) {
      continue;
    }
    ++ok;
    prompt_tokens += r.server.prompt_n.value_or(r.prompt_tokens_counted.value_or(0));
    decode_tokens += r.client.tokens;
    if (r.client.ttft_ms) {
      ttft.push_back(*r.client.ttft_ms);
    }
    for (std::size_t i = 1; i < r.client.token_ms.size(); ++i) {
      itl.push_back(r.client.token_ms[i] - r.client.token_ms[i - 1]);
    }
  }
  const double span_s = calls > 0 ? end_s - begin_s : 0;
  results::ConcurrencyStats out;
  out.calls = calls;
  out.ok = ok;
  out.refused = refused_n;
  out.failed = calls - ok - refused_n;
  out.span_s = span_s;
  out.max_in_flight = max_in_flight;
  if (span_s > 0) {
    out.prompt_tok_per_s = prompt_tokens / span_s;
    out.decode_tok_per_s = decode_tokens / span_s;
  }
  out.ttft_ms = percentiles(std::move(ttft));
  out.itl_ms = percentiles(std::move(itl));
  return out;
}

}  // namespace kvbench::load
