#pragma once
// The KV-cache arithmetic: bytes one token takes in each cache type llama.cpp accepts, and the
// totals for a context window as llama.cpp lays it out (n_ctx padded up to a multiple of 256,
// one stream per sequence unless the cache is unified). Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/gguf/ggml_types.h"
#include "harness/gguf/model_shape.h"

namespace kvbench::kv {

// llama.cpp rounds the context (and, without a unified cache, each sequence's share) up to a
// multiple of this many cells.
inline constexpr std::uint64_t kCtxPadding = 256;

// n rounded up to a multiple of kCtxPadding (0 stays 0).
std::uint64_t pad_ctx(std::uint64_t n);

// How the server lays out its cache: `n_ctx` is the -c value, shared by `n_seq` sequences
// (-np); unified: one stream of pad(n_ctx) cells, else n_seq streams of pad(pad(n_ctx)/n_seq).
struct CacheLayout {
  std::uint64_t n_ctx = 0;
  std::uint32_t n_seq = 1;
  bool unified = false;
};

// Cells (token slots) the layout allocates in total, over all streams.
std::uint64_t cache_cells(const CacheLayout& layout);

// The arithmetic of one cache type (the same type for K and V).
struct TypeArithmetic {
  gguf::GgmlType type;
  std::string_view name;                         // as llama.cpp spells it: "q8_0"
  double bytes_per_number = 0;                   // block bytes / block size
  std::optional<std::uint64_t> bytes_per_token;  // nullopt: a row is not whole blocks
};

// The arithmetic of every type llama.cpp accepts for its cache, in its help order.
std::vector<TypeArithmetic> arithmetic_for_all_types(const gguf::ModelShape& shape);

// The arithmetic of one type by name; std::nullopt for a name llama.cpp does not accept.
std::optional<TypeArithmetic> arithmetic_for(const gguf::ModelShape& shape, std::string_view name);

// Bytes one token takes in each half of a KV cache setting: `level` names both halves ("q8_0")
// or K and V apart ("q8_0/f16", scenario::cache_halves). nullopt for a name llama.cpp does not
// accept, or a half whose rows are not whole blocks.
struct HalfBytes {
  std::uint64_t k = 0;
  std::uint64_t v = 0;
  std::uint64_t total() const { return k + v; }
};
std::optional<HalfBytes> level_bytes_per_token(const gguf::ModelShape& shape,
                                               std::string_view level);

// Total KV bytes of `layout` at `bytes_per_token` (cells x bytes per token).
std::uint64_t cache_bytes(const CacheLayout& layout, std::uint64_t bytes_per_token);

// The lesson's model (qwen2.5:3b: 36 layers, 16 heads, 2 KV heads of 128, 2048 wide) and the
// synthetic presets ("tiny", "small", "lesson"); std::nullopt for an unknown name.
std::optional<gguf::ModelShape> kv_preset(std::string_view name);

// The names kv_preset knows.
std::vector<std::string> kv_preset_names();

// A shape from explicit sizes: head_dim_v = 0 means head_dim_k. Throws kvbench::InputError
// naming the flag when a size is zero.
gguf::ModelShape explicit_shape(std::uint32_t n_layer, std::uint32_t n_head_kv,
                                std::uint32_t head_dim_k, std::uint32_t head_dim_v);

}  // namespace kvbench::kv
