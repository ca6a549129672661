#include "harness/gguf/model_shape.h"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::gguf {
namespace {

// An unsigned integer key that fits in u32; std::nullopt when absent.
std::optional<std::uint32_t> get_u32(const GgufFile& file, const std::string& key) {
  const Value* v = file.find(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  const auto n = to_unsigned(*v);
  if (!n || *n > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError(fmt::format("GGUF key '{}' must be an unsigned 32-bit integer, found {}", key,
                                 value_type_name(v->type())));
  }
  return static_cast<std::uint32_t>(*n);
}

std::uint32_t require_u32(const GgufFile& file, const std::string& key) {
  const auto n = get_u32(file, key);
  if (!n) {
    throw InputError(fmt::format("GGUF metadata lacks the key '{}'", key));
  }
  return *n;
}

// A count that is either one integer or an array with one integer per layer.
struct PerLayer {
  std::uint32_t max = 0;
  std::vector<std::uint32_t> layers;  // empty for a scalar
};

std::optional<PerLayer> get_per_layer(const GgufFile& file, const std::string& key,
                                      std::uint32_t n_layer) {
  const Value* v = file.find(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  const auto* arr = std::get_if<Array>(&v->data);
  if (arr == nullptr) {
    return PerLayer{require_u32(file, key), {}};
  }
  PerLayer out;
  std::visit(
      [&](const auto& items) {
        for (const auto& item : items) {
          const auto n = to_unsigned(Value{item});
          if (!n || *n > std::numeric_limits<std::uint32_t>::max()) {
            throw InputError(fmt::format("GGUF key '{}' must hold unsigned 32-bit integers", key));
          }
          out.layers.push_back(static_cast<std::uint32_t>(*n));
        }
      },
      arr->items);
  if (out.layers.size() != n_layer) {
    throw InputError(fmt::format("GGUF key '{}' has {} entries, expected one per layer ({})", key,
                                 out.layers.size(), n_layer));
  }
  out.max = out.layers.empty() ? 0 : *std::max_element(out.layers.begin(), out.layers.end());
  return out;
}

std::uint32_t vocab_size(const GgufFile& file, const std::string& arch) {
  if (const Value* tokens = file.find("tokenizer.ggml.tokens")) {
    if (const auto* arr = std::get_if<Array>(&tokens->data)) {
      return static_cast<std::uint32_t>(arr->size());
    }
  }
  if (auto n = get_u32(file, arch + ".vocab_size")) {
    return *n;
  }
  for (const TensorInfo& t : file.tensors) {
    if (t.name == "token_embd.weight" && t.ne.size() == 2 &&
        t.ne[1] <= std::numeric_limits<std::uint32_t>::max()) {
      return static_cast<std::uint32_t>(t.ne[1]);
    }
  }
  throw InputError(
      fmt::format("GGUF metadata lacks the key 'tokenizer.ggml.tokens' (and '{}"
                  ".vocab_size')",
                  arch));
}

}  // namespace

ModelShape shape_from_metadata(const GgufFile& file) {
  ModelShape s;
  const Value* arch = file.find("general.architecture");
  const auto* arch_name = arch ? std::get_if<std::string>(&arch->data) : nullptr;
  if (arch_name == nullptr) {
    throw InputError("GGUF metadata lacks the string key 'general.architecture'");
  }
  s.arch = *arch_name;
  const std::string p = s.arch + ".";
  s.n_layer = require_u32(file, p + "block_count");
  s.n_embd = require_u32(file, p + "embedding_length");
  s.n_ctx_train = require_u32(file, p + "context_length");
  const auto heads = get_per_layer(file, p + "attention.head_count", s.n_layer);
  if (!heads || heads->max == 0) {
    throw InputError(fmt::format("GGUF metadata lacks a non-zero '{}attention.head_count'", p));
  }
  s.n_head = heads->max;
  const auto kv = get_per_layer(file, p + "attention.head_count_kv", s.n_layer);
  s.n_head_kv = kv ? kv->max : s.n_head;
  s.n_head_kv_layers = kv ? kv->layers : std::vector<std::uint32_t>{};
  const auto ff = get_per_layer(file, p + "feed_forward_length", s.n_layer);
  s.n_ff = ff ? ff->max : 0;
  s.head_dim_k = get_u32(file, p + "attention.key_length").value_or(s.n_embd / s.n_head);
  s.head_dim_v = get_u32(file, p + "attention.value_length").value_or(s.n_embd / s.n_head);
  s.rope_dims = get_u32(file, p + "rope.dimension_count").value_or(s.head_dim_k);
  s.sliding_window = get_u32(file, p + "attention.sliding_window");
  if (const Value* eps = file.find(p + "attention.layer_norm_rms_epsilon")) {
    if (const auto* f = std::get_if<float>(&eps->data)) {
      s.rms_eps = *f;
    }
  }
  s.n_vocab = vocab_size(file, s.arch);
  return s;
}

std::uint32_t n_head_kv_at(const ModelShape& shape, std::uint32_t layer) {
  return layer < shape.n_head_kv_layers.size() ? shape.n_head_kv_layers[layer] : shape.n_head_kv;
}

std::optional<std::uint64_t> kv_bytes_per_token(const ModelShape& shape, GgmlType type_k,
                                                GgmlType type_v) {
  const GgmlTypeInfo& k = ggml_type_info(type_k);
  const GgmlTypeInfo& v = ggml_type_info(type_v);
  std::uint64_t total = 0;
  for (std::uint32_t layer = 0; layer < shape.n_layer; ++layer) {
    const std::uint64_t heads = n_head_kv_at(shape, layer);
    const std::uint64_t nk = heads * shape.head_dim_k;
    const std::uint64_t nv = heads * shape.head_dim_v;
    if (nk % k.block_size != 0 || nv % v.block_size != 0) {
      return std::nullopt;
    }
    total += row_size(type_k, nk) + row_size(type_v, nv);
  }
  return total;
}

std::vector<std::string> llama_shape_problems(const ModelShape& s) {
  std::vector<std::string> problems;
  const auto positive = [&](std::uint32_t v, std::string_view name) {
    if (v == 0) {
      problems.push_back(fmt::format("{} must be at least 1", name));
    }
  };
  positive(s.n_layer, "layer count");
  positive(s.n_embd, "embedding width");
  positive(s.n_head, "head count");
  positive(s.n_head_kv, "KV head count");
  positive(s.n_ff, "feed-forward width");
  positive(s.n_ctx_train, "trained context length");
  positive(s.n_vocab, "vocabulary size");
  if (!problems.empty()) {
    return problems;
  }
  if (s.n_embd % s.n_head != 0) {
    problems.push_back(fmt::format("embedding width {} is not a multiple of the head count {}",
                                   s.n_embd, s.n_head));
  }
  if (s.n_head % s.n_head_kv != 0) {
    problems.push_back(fmt::format("head count {} is not a multiple of the KV head count {}",
                                   s.n_head, s.n_head_kv));
  }
  if (s.head_dim_k != s.head_dim_v || s.rope_dims != s.head_dim_k || s.head_dim_k % 2 != 0) {
    problems.push_back(fmt::format("head dims (k {}, v {}, rope {}) must be equal and even",
                                   s.head_dim_k, s.head_dim_v, s.rope_dims));
  }
  return problems;
}

std::optional<ModelShape> preset_shape(std::string_view name) {
  const auto make = [](std::uint32_t layers, std::uint32_t embd, std::uint32_t heads,
                       std::uint32_t kv_heads, std::uint32_t ff) {
    ModelShape s;
    s.n_layer = layers;
    s.n_embd = embd;
    s.n_head = heads;
    s.n_head_kv = kv_heads;
    s.n_ff = ff;
    s.n_ctx_train = 32768;
    s.n_vocab = kPresetVocabSize;
    s.head_dim_k = s.head_dim_v = s.rope_dims = embd / heads;
    return s;
  };
  if (name == "tiny") {
    return make(2, 64, 4, 2, 128);
  }
  if (name == "small") {
    return make(4, 256, 4, 2, 768);
  }
  if (name == "lesson") {
    return make(8, 512, 8, 2, 1536);
  }
  return std::nullopt;
}

std::optional<std::string_view> synthetic_preset(std::string_view model) {
  if (!model.starts_with(kSyntheticPrefix)) {
    return std::nullopt;
  }
  return model.substr(kSyntheticPrefix.size());
}

std::span<const std::string_view> preset_names() {
  static constexpr std::array<std::string_view, 3> kNames{"tiny", "small", "lesson"};
  return kNames;
}

void to_json(nlohmann::json& j, const ModelShape& s) {
  j = {{"arch", s.arch},
       {"n_layer", s.n_layer},
       {"n_embd", s.n_embd},
       {"n_head", s.n_head},
       {"n_head_kv", s.n_head_kv},
       {"n_ff", s.n_ff},
       {"n_ctx_train", s.n_ctx_train},
       {"n_vocab", s.n_vocab},
       {"head_dim_k", s.head_dim_k},
       {"head_dim_v", s.head_dim_v},
       {"rope_dims", s.rope_dims}};
  if (!s.n_head_kv_layers.empty()) {
    j["n_head_kv_layers"] = s.n_head_kv_layers;
  }
  if (s.sliding_window) {
    j["sliding_window"] = *s.sliding_window;
  }
}

void from_json(const nlohmann::json& j, ModelShape& s) {
  const ModelShape d;
  s.arch = j.value("arch", d.arch);
  s.n_layer = j.value("n_layer", d.n_layer);
  s.n_embd = j.value("n_embd", d.n_embd);
  s.n_head = j.value("n_head", d.n_head);
  s.n_head_kv = j.value("n_head_kv", d.n_head_kv);
  s.n_head_kv_layers = j.value("n_head_kv_layers", d.n_head_kv_layers);
  s.n_ff = j.value("n_ff", d.n_ff);
  s.n_ctx_train = j.value("n_ctx_train", d.n_ctx_train);
  s.n_vocab = j.value("n_vocab", d.n_vocab);
  s.head_dim_k = j.value("head_dim_k", d.head_dim_k);
  s.head_dim_v = j.value("head_dim_v", s.head_dim_k);
  s.rope_dims = j.value("rope_dims", d.rope_dims);
  s.sliding_window = std::nullopt;
  if (const auto it = j.find("sliding_window"); it != j.end() && it->is_number_unsigned()) {
    s.sliding_window = it->get<std::uint32_t>();
  }
}

}  // namespace kvbench::gguf
