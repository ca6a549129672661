#pragma once
// Checked before a managed llama-server starts: the model file plus its KV cache at every
// planned condition (num_ctx x cache type, by llama.cpp's arithmetic) beside the memory that
// would hold them, the machine's MemAvailable and, where server.gpu_layers puts layers on a GPU
// nvidia-smi lists, the GPUs' free memory. A plan that cannot fit would start a server the
// kernel kills, or one that swaps and measures the disk.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/gguf/model_shape.h"
#include "harness/scenario/scenario.h"

namespace kvbench::servers {

struct FitCondition {
  int num_ctx = 0;
  std::string cache_type;
  std::uint64_t model_bytes = 0;
  std::uint64_t kv_bytes = 0;
  std::uint64_t gpu_bytes = 0;  // the share of the layers on the GPU (weights and KV cache)
  std::uint64_t need() const { return model_bytes + kv_bytes; }
  std::uint64_t host() const { return need() - gpu_bytes; }
};

// Where server.gpu_layers puts layers on a GPU: how many of the model's, and the GPUs' free memory
// (nvidia-smi's total less used, summed over the GPUs it lists; nullopt where it lists none).
struct GpuBudget {
  int layers = -1;
  std::optional<std::uint64_t> free;
  std::string names;  // "NVIDIA H100 80GB HBM3" and the like, for messages
};

struct MemoryFit {
  std::vector<FitCondition> conditions;  // the scenario's, in factor order
  std::optional<std::uint64_t> available;
  GpuBudget gpu;
  std::uint32_t model_layers = 0;
  std::vector<std::string> warnings;  // a num_ctx beyond the model's trained context
};

// The conditions of `s` with a model of `shape` and `model_bytes`: with `gpu.layers` > 0 on a GPU
// that is listed, that share of the layers (their weights and their KV cache, as llama.cpp
// offloads them) is the GPU's, the rest the machine's. Pure.
MemoryFit memory_fit(const scenario::Scenario& s, const gguf::ModelShape& shape,
                     std::uint64_t model_bytes, std::optional<std::uint64_t> available,
                     const GpuBudget& gpu = {});

// Throws InputError (exit 2) naming the largest condition, what it needs and the memory there is,
// when it needs more than is available, unless `force`. Nothing when the memory is unknown.
void check_memory_fit(const MemoryFit& fit, const std::string& source, bool force);

// The machine's MemAvailable (/proc/meminfo), when it says.
std::optional<std::uint64_t> available_memory();

// `layers` and, where it is above 0, the free memory of the GPUs nvidia-smi lists.
GpuBudget gpu_budget(int layers);

}  // namespace kvbench::servers
