// Choosing and scaling the requests of a trace: windows, family samples, token and time scales.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/workloads/trace/select.h"

namespace kvbench::workloads::trace {

std::optional<std::pair<std::uint64_t, std::uint64_t>> family_key(const Request& r) {
  if (r.blocks.size() < 2) {
    return std::nullopt;
  }
  return std::pair{r.blocks[0], r.blocks[1]};
}

namespace {

// The same trace with other requests.
Trace with_requests(const Trace& trace, std::vector<Request> requests) {
  Trace out;
  out.format = trace.format;
  out.block_tokens = trace.block_tokens;
  out.partial_block_has_id = trace.partial_block_has_id;
  out.requests = std::move(requests);
  return out;
}

int round_positive(double x) {
  return static_cast<int>(std::lround(x));
}

}  // namespace

Trace take_window(const Trace& trace, const Window& window) {
  const std::size_t n = trace.requests.size();
  if (window.first >= n) {
    throw InputError(
        fmt::format("window.first {} is past the trace's last request: it has {}, "
                    "numbered from 0",
                    window.first, n));
  }
  const std::size_t count = window.count.value_or(n - window.first);
  if (count == 0 || count > n - window.first) {
    throw InputError(
        fmt::format("window.count {}: expected 1 to {}, the requests from {} to the "
                    "trace's end",
                    count, n - window.first, window.first));
  }
  const auto begin = trace.requests.begin() + static_cast<std::ptrdiff_t>(window.first);
  return with_requests(trace, {begin, begin + static_cast<std::ptrdiff_t>(count)});
}

Trace sample_families(const Trace& trace, const Sample& sample) {
  // Families in order of their first request, so the draw depends on the trace and the seed only.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> size_of;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> order;
  for (const auto& r : trace.requests) {
    if (const auto key = family_key(r)) {
      if (size_of[*key]++ == 0) {
        order.push_back(*key);
      }
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> candidates;
  std::copy_if(order.begin(), order.end(), std::back_inserter(candidates),
               [&](const auto& key) { return size_of[key] >= 2; });
  if (sample.families == 0 || sample.families > candidates.size()) {
    throw InputError(
        fmt::format("sample.families {}: expected 1 to {}, the trace's prefix "
                    "families of at least two requests",
                    sample.families, candidates.size()));
  }
  Rng rng(sample.seed);
  kvbench::shuffle(candidates.begin(), candidates.end(), rng);
  candidates.resize(sample.families);
  std::sort(candidates.begin(), candidates.end());
  std::vector<Request> kept;
  for (const auto& r : trace.requests) {
    const auto key = family_key(r);
    if (key && std::binary_search(candidates.begin(), candidates.end(), *key)) {
      kept.push_back(r);
    }
  }
  return with_requests(trace, std::move(kept));
}

int scaled_input(const Trace& trace, const Request& r, int scaled_block, double tokens) {
  const auto n = static_cast<int>(r.blocks.size());
  if (trace.partial_block_has_id) {
    if (n == 0) {
      return std::max(1, round_positive(r.input_tokens * tokens));
    }
    const int last = r.input_tokens - (n - 1) * trace.block_tokens;
    return (n - 1) * scaled_block + std::clamp(round_positive(last * tokens), 1, scaled_block);
  }
  const int tail = r.input_tokens - n * trace.block_tokens;
  return std::max(
      1, n * scaled_block + std::clamp(round_positive(tail * tokens), 0, scaled_block - 1));
}

Trace scale_trace(const Trace& trace, const Scale& scale) {
  if (!(scale.tokens > 0) || !std::isfinite(scale.tokens)) {
    throw InputError(fmt::format("scale.tokens {}: expected a number above 0", scale.tokens));
  }
  if (!(scale.time > 0) || !std::isfinite(scale.time)) {
    throw InputError(fmt::format("scale.time {}: expected a number above 0", scale.time));
  }
  const int block = std::max(1, round_positive(trace.block_tokens * scale.tokens));
  Trace out = with_requests(trace, trace.requests);
  out.block_tokens = block;
  const double start_ms = trace.requests.empty() ? 0.0 : trace.requests.front().due_ms;
  for (auto& r : out.requests) {
    r.input_tokens = scaled_input(trace, r, block, scale.tokens);
    r.output_tokens = std::max(1, round_positive(r.output_tokens * scale.tokens));
    r.due_ms = (r.due_ms - start_ms) / scale.time;
  }
  return out;
}

}  // namespace kvbench::workloads::trace
