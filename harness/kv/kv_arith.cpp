#include "harness/kv/kv_arith.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::kv {

std::uint64_t pad_ctx(std::uint64_t n) {
  return (n + kCtxPadding - 1) / kCtxPadding * kCtxPadding;
}

std::uint64_t cache_cells(const CacheLayout& layout) {
  const std::uint64_t padded = pad_ctx(layout.n_ctx);
  if (layout.unified || layout.n_seq <= 1) {
    return padded;
  }
  return pad_ctx(padded / layout.n_seq) * layout.n_seq;
}

std::vector<TypeArithmetic> arithmetic_for_all_types(const gguf::ModelShape& shape) {
  std::vector<TypeArithmetic> out;
  for (const gguf::GgmlType type : gguf::kv_cache_types()) {
    const gguf::GgmlTypeInfo& info = gguf::ggml_type_info(type);
    out.push_back({type, info.name,
                   static_cast<double>(info.block_bytes) / static_cast<double>(info.block_size),
                   gguf::kv_bytes_per_token(shape, type, type)});
  }
  return out;
}

std::optional<TypeArithmetic> arithmetic_for(const gguf::ModelShape& shape, std::string_view name) {
  for (auto& a : arithmetic_for_all_types(shape)) {
    if (a.name == name) {
      return a;
    }
  }
  return std::nullopt;
}

std::optional<HalfBytes> level_bytes_per_token(const gguf::ModelShape& shape,
                                               std::string_view level) {
  const auto slash = level.find('/');
  const auto k = gguf::ggml_type_from_name(level.substr(0, slash));
  const auto v =
      gguf::ggml_type_from_name(slash == std::string_view::npos ? level : level.substr(slash + 1));
  const auto accepted = [](std::optional<gguf::GgmlType> t) {
    const auto& all = gguf::kv_cache_types();
    return t && std::find(all.begin(), all.end(), *t) != all.end();
  };
  if (!accepted(k) || !accepted(v)) {
    return std::nullopt;
  }
  const gguf::GgmlTypeInfo& ki = gguf::ggml_type_info(*k);
  const gguf::GgmlTypeInfo& vi = gguf::ggml_type_info(*v);
  HalfBytes out;
  for (std::uint32_t layer = 0; layer < shape.n_layer; ++layer) {
    const std::uint64_t heads =
        layer < shape.n_head_kv_layers.size() ? shape.n_head_kv_layers[layer] : shape.n_head_kv;
    const std::uint64_t nk = heads * shape.head_dim_k;
    const std::uint64_t nv = heads * shape.head_dim_v;
    if (nk % ki.block_size != 0 || nv % vi.block_size != 0) {
      return std::nullopt;
    }
    out.k += gguf::row_size(*k, nk);
    out.v += gguf::row_size(*v, nv);
  }
  return out;
}

std::uint64_t cache_bytes(const CacheLayout& layout, std::uint64_t bytes_per_token) {
  return cache_cells(layout) * bytes_per_token;
}

std::optional<gguf::ModelShape> kv_preset(std::string_view name) {
  if (name == "qwen2.5:3b") {
    gguf::ModelShape s;
    s.arch = "qwen2";
    s.n_layer = 36;
    s.n_embd = 2048;
    s.n_head = 16;
    s.n_head_kv = 2;
    s.n_ff = 11008;
    s.n_ctx_train = 32768;
    s.n_vocab = 151936;
    s.head_dim_k = s.head_dim_v = s.rope_dims = 128;
    return s;
  }
  return gguf::preset_shape(name);
}

std::vector<std::string> kv_preset_names() {
  std::vector<std::string> names{"qwen2.5:3b"};
  for (std::string_view n : gguf::preset_names()) {
    names.emplace_back(n);
  }
  return names;
}

gguf::ModelShape explicit_shape(std::uint32_t n_layer, std::uint32_t n_head_kv,
                                std::uint32_t head_dim_k, std::uint32_t head_dim_v) {
  const auto need = [](std::uint32_t v, const char* flag) {
    if (v == 0) {
      throw InputError(fmt::format("{} must be given and at least 1", flag));
    }
  };
  need(n_layer, "--layers");
  need(n_head_kv, "--kv-heads");
  need(head_dim_k, "--head-dim");
  gguf::ModelShape s;
  s.n_layer = n_layer;
  s.n_head_kv = n_head_kv;
  s.head_dim_k = head_dim_k;
  s.head_dim_v = head_dim_v == 0 ? head_dim_k : head_dim_v;
  return s;
}

}  // namespace kvbench::kv
