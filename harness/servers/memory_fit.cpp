#include "harness/servers/memory_fit.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/kv/kv_arith.h"
#include "harness/measure/machine.h"

namespace kvbench::servers {

namespace {

std::string gib(std::uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace

MemoryFit memory_fit(const scenario::Scenario& s, const gguf::ModelShape& shape,
                     std::uint64_t model_bytes, std::optional<std::uint64_t> available) {
  MemoryFit fit;
  fit.available = available;
  for (const int ctx : s.factors.num_ctx) {
    if (shape.n_ctx_train > 0 && static_cast<std::uint32_t>(ctx) > shape.n_ctx_train) {
      fit.warnings.push_back(fmt::format(
          "num_ctx {} is beyond the model's trained context of {} tokens: its answers past "
          "that may not mean much, its timings still do",
          ctx, shape.n_ctx_train));
    }
    for (const auto& type : s.factors.cache_type) {
      const auto arithmetic = kv::arithmetic_for(shape, type);
      if (!arithmetic || !arithmetic->bytes_per_token) {
        continue;  // refused elsewhere, or not whole blocks: no arithmetic to hold up
      }
      FitCondition c;
      c.num_ctx = ctx;
      c.cache_type = type;
      c.model_bytes = model_bytes;
      c.kv_bytes = kv::cache_bytes({static_cast<std::uint64_t>(ctx), 1, false},
                                   *arithmetic->bytes_per_token);
      fit.conditions.push_back(c);
    }
  }
  return fit;
}

void check_memory_fit(const MemoryFit& fit, const std::string& source, bool force) {
  if (!fit.available || fit.conditions.empty()) {
    return;
  }
  const auto largest = std::max_element(
      fit.conditions.begin(), fit.conditions.end(),
      [](const FitCondition& a, const FitCondition& b) { return a.need() < b.need(); });
  if (largest->need() <= *fit.available || force) {
    return;
  }
  throw InputError(fmt::format(
      "{}: num_ctx {} with a {} KV cache needs {} (the model file {} and its KV cache {}), "
      "more than the {} of memory available (MemAvailable): the server would swap or be "
      "killed. Plan a smaller num_ctx or cache type, or give --force to start it anyway",
      source, largest->num_ctx, largest->cache_type, gib(largest->need()),
      gib(largest->model_bytes), gib(largest->kv_bytes), gib(*fit.available)));
}

std::optional<std::uint64_t> available_memory() {
  std::ifstream in("/proc/meminfo");
  std::ostringstream text;
  text << in.rdbuf();
  return measure::parse_meminfo_bytes(text.str(), "MemAvailable");
}

}  // namespace kvbench::servers
