#pragma once
// Checked before a managed llama-server starts: the model file plus its KV cache at every
// planned condition (num_ctx x cache type, by llama.cpp's arithmetic) beside the memory that
// would hold them, the machine's MemAvailable. A plan that cannot fit would start a server the
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
  std::uint64_t need() const { return model_bytes + kv_bytes; }
};

struct MemoryFit {
  std::vector<FitCondition> conditions;  // the scenario's, in factor order
  std::optional<std::uint64_t> available;
  std::vector<std::string> warnings;  // a num_ctx beyond the model's trained context
};

// The conditions of `s` with a model of `shape` and `model_bytes`. Pure.
MemoryFit memory_fit(const scenario::Scenario& s, const gguf::ModelShape& shape,
                     std::uint64_t model_bytes, std::optional<std::uint64_t> available);

// Throws InputError (exit 2) naming the largest condition, what it needs and the memory there is,
// when it needs more than is available, unless `force`. Nothing when the memory is unknown.
void check_memory_fit(const MemoryFit& fit, const std::string& source, bool force);

// The machine's MemAvailable (/proc/meminfo), when it says.
std::optional<std::uint64_t> available_memory();

}  // namespace kvbench::servers
