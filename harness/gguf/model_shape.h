#pragma once
// The shape of a transformer as the KV cache and the synthetic-model writer see it, read from GGUF
// metadata (architecture-prefixed keys, as llama.cpp's load_hparams reads them) or taken from a
// named preset.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gguf/ggml_types.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {

struct ModelShape {
  std::string arch = "llama";
  std::uint32_t n_layer = 0;
  std::uint32_t n_embd = 0;
  std::uint32_t n_head = 0;     // the largest per-layer count when the file gives an array
  std::uint32_t n_head_kv = 0;  // the largest per-layer count when the file gives an array
  std::vector<std::uint32_t> n_head_kv_layers;  // per layer, when the file gives an array
  std::uint32_t n_ff = 0;                       // 0 when the file does not say
  std::uint32_t n_ctx_train = 0;
  std::uint32_t n_vocab = 0;
  std::uint32_t head_dim_k = 0;
  std::uint32_t head_dim_v = 0;
  std::uint32_t rope_dims = 0;
  std::optional<std::uint32_t> sliding_window;
  float rms_eps = 1e-5F;
  friend bool operator==(const ModelShape& a, const ModelShape& b) = default;
};

// The shape as run.json and `kvbench model info` record it: every field but rms_eps,
// n_head_kv_layers and sliding_window only when the model has them. from_json reads what a recorded
// run holds: a missing field keeps its default (head_dim_v defaults to head_dim_k).
void to_json(nlohmann::json& j, const ModelShape& s);
void from_json(const nlohmann::json& j, ModelShape& s);

// Vocabulary size of the presets (the synthetic tokenizer, padded with unused tokens).
constexpr std::uint32_t kPresetVocabSize = 512;

// Reads the shape from metadata: general.architecture, <arch>.block_count, .embedding_length,
// .attention.head_count, .context_length are required; head_count_kv (default head_count),
// key_length/value_length (default n_embd / n_head), rope.dimension_count (default head_dim_k),
// feed_forward_length, attention.sliding_window, attention.layer_norm_rms_epsilon are optional.
// n_vocab comes from tokenizer.ggml.tokens, <arch>.vocab_size or token_embd.weight.
// Throws kvbench::InputError naming the missing or mistyped key.
ModelShape shape_from_metadata(const GgufFile& file);

// Attention KV heads of layer `layer` (the per-layer array when present, else n_head_kv).
std::uint32_t n_head_kv_at(const ModelShape& shape, std::uint32_t layer);

// KV cache bytes one token takes across all layers:
// sum over layers of row_size(type_k, head_dim_k * n_head_kv) + row_size(type_v, head_dim_v *
// n_head_kv). std::nullopt when a row is not a whole number of blocks of the type. Sliding-window
// layers are counted as full layers (an upper bound for SWA models).
std::optional<std::uint64_t> kv_bytes_per_token(const ModelShape& shape, GgmlType type_k,
                                                GgmlType type_v);

// Problems that stop llama.cpp's "llama" architecture from loading `shape` (one line each; empty
// when fine): zero sizes, n_embd not divisible by n_head, n_head by n_head_kv, odd head dim, ...
std::vector<std::string> llama_shape_problems(const ModelShape& shape);

// A shape by preset name ("tiny", "small", "lesson"); std::nullopt for an unknown name.
std::optional<ModelShape> preset_shape(std::string_view name);

// The preset names, smallest first.
std::span<const std::string_view> preset_names();

// A scenario's model "synthetic:<preset>" names a preset kvbench writes; any other is a GGUF path
// or a server's model name.
inline constexpr std::string_view kSyntheticPrefix = "synthetic:";

// The preset a model name asks for ("synthetic:small" -> "small"); std::nullopt when it does not
// start with kSyntheticPrefix (the preset itself may be unknown: preset_shape() says).
std::optional<std::string_view> synthetic_preset(std::string_view model);

}  // namespace kvbench::gguf
