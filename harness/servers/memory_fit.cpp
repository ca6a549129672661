#include "harness/servers/memory_fit.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"
#include "harness/kv/kv_arith.h"
#include "harness/measure/gpu.h"
#include "harness/measure/machine.h"

namespace kvbench::servers {

namespace {

std::string gib(std::uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace

MemoryFit memory_fit(const scenario::Scenario& s, const gguf::ModelShape& shape,
                     std::uint64_t model_bytes, std::optional<std::uint64_t> available,
                     const GpuBudget& gpu) {
  MemoryFit fit;
  fit.available = available;
  fit.gpu = gpu;
  fit.model_layers = shape.n_layer;
  const double on_gpu =
      gpu.layers > 0 && gpu.free && shape.n_layer > 0
          ? std::min(1.0, static_cast<double>(gpu.layers) / static_cast<double>(shape.n_layer))
          : 0.0;
  if (gpu.layers > 0 && !gpu.free) {
    fit.warnings.push_back(fmt::format(
        "server.gpu_layers is {}, but nvidia-smi lists no GPU: no GPU memory is checked, and the "
        "whole model is put beside the machine's memory",
        gpu.layers));
  }
  for (const int ctx : s.factors.num_ctx) {
    if (shape.n_ctx_train > 0 && static_cast<std::uint32_t>(ctx) > shape.n_ctx_train) {
      fit.warnings.push_back(fmt::format(
          "num_ctx {} is beyond the model's trained context of {} tokens: its answers past "
          "that may not mean much, its timings still do",
          ctx, shape.n_ctx_train));
    }
    for (const auto& type : s.factors.cache_type) {
      const auto arithmetic = kv::level_bytes_per_token(shape, type);
      if (!arithmetic) {
        continue;  // refused elsewhere, or not whole blocks: no arithmetic to hold up
      }
      FitCondition c;
      c.num_ctx = ctx;
      c.cache_type = type;
      c.model_bytes = model_bytes;
      c.kv_bytes =
          kv::cache_bytes({static_cast<std::uint64_t>(ctx), 1, false}, arithmetic->total());
      c.gpu_bytes = static_cast<std::uint64_t>(on_gpu * static_cast<double>(c.need()));
      fit.conditions.push_back(c);
    }
  }
  return fit;
}

void check_memory_fit(const MemoryFit& fit, const std::string& source, bool force) {
  if (fit.conditions.empty() || force) {
    return;
  }
  const auto largest = [&](auto part) {
    return *std::max_element(
        fit.conditions.begin(), fit.conditions.end(),
        [&](const FitCondition& a, const FitCondition& b) { return part(a) < part(b); });
  };
  const auto host = largest([](const FitCondition& c) { return c.host(); });
  if (fit.available && host.host() > *fit.available) {
    throw InputError(fmt::format(
        "{}: num_ctx {} with a {} KV cache needs {} (the model file {} and its KV cache {}{}), "
        "more than the {} of memory available (MemAvailable): the server would swap or be "
        "killed. Plan a smaller num_ctx or cache type, or give --force to start it anyway",
        source, host.num_ctx, host.cache_type, gib(host.host()), gib(host.model_bytes),
        gib(host.kv_bytes),
        host.gpu_bytes > 0 ? fmt::format(", less {} on the GPU", gib(host.gpu_bytes)) : "",
        gib(*fit.available)));
  }
  const auto gpu = largest([](const FitCondition& c) { return c.gpu_bytes; });
  if (fit.gpu.free && gpu.gpu_bytes > *fit.gpu.free) {
    throw InputError(fmt::format(
        "{}: num_ctx {} with a {} KV cache puts {} on the GPU ({} of the model's {} layers: "
        "their share of the model file {} and of its KV cache {}), more than the {} free on {} "
        "(nvidia-smi): the server would fail to load. Plan fewer --gpu-layers, a smaller num_ctx "
        "or cache type, or give --force to start it anyway",
        source, gpu.num_ctx, gpu.cache_type, gib(gpu.gpu_bytes),
        std::min<std::uint32_t>(static_cast<std::uint32_t>(fit.gpu.layers), fit.model_layers),
        fit.model_layers, gib(gpu.model_bytes), gib(gpu.kv_bytes), gib(*fit.gpu.free),
        fit.gpu.names.empty() ? "the GPU" : fit.gpu.names));
  }
}

std::optional<std::uint64_t> available_memory() {
  std::ifstream in("/proc/meminfo");
  std::ostringstream text;
  text << in.rdbuf();
  return measure::parse_meminfo_bytes(text.str(), "MemAvailable");
}

GpuBudget gpu_budget(int layers) {
  GpuBudget b;
  b.layers = layers;
  if (layers <= 0) {
    return b;
  }
  std::uint64_t free = 0;
  std::vector<std::string> names;
  for (const auto& d : measure::gpu_devices()) {
    if (d.memory_total_bytes && d.memory_used_bytes &&
        *d.memory_total_bytes >= *d.memory_used_bytes) {
      free += *d.memory_total_bytes - *d.memory_used_bytes;
      names.push_back(fmt::format("GPU {} ({})", d.index, d.name));
      b.free = free;
    }
  }
  b.names = fmt::format("{}", fmt::join(names, ", "));
  return b;
}

}  // namespace kvbench::servers
