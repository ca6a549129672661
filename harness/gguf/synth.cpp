#include "harness/gguf/synth.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::gguf {
namespace {

constexpr std::uint64_t kChunkElements = std::uint64_t{1} << 18;
constexpr double kWeightStddev = 0.02;
constexpr std::uint32_t kFtypeAllF32 = 0;     // llama_ftype LLAMA_FTYPE_ALL_F32
constexpr std::uint32_t kFtypeMostlyF16 = 1;  // llama_ftype LLAMA_FTYPE_MOSTLY_F16

void add_hparams(GgufFile& f, const ModelShape& s, GgmlType weight_type) {
  f.set("general.architecture", Value{std::string("llama")});
  f.set("general.name", Value{fmt::format("kvbench synthetic {}x{} h{}/{} ff{}", s.n_layer,
                                          s.n_embd, s.n_head, s.n_head_kv, s.n_ff)});
  f.set("general.alignment", Value{kDefaultAlignment});
  f.set("general.file_type", Value{weight_type == GgmlType::f32 ? kFtypeAllF32 : kFtypeMostlyF16});
  f.set("llama.context_length", Value{s.n_ctx_train});
  f.set("llama.embedding_length", Value{s.n_embd});
  f.set("llama.block_count", Value{s.n_layer});
  f.set("llama.feed_forward_length", Value{s.n_ff});
  f.set("llama.attention.head_count", Value{s.n_head});
  f.set("llama.attention.head_count_kv", Value{s.n_head_kv});
  f.set("llama.rope.dimension_count", Value{s.rope_dims});
  f.set("llama.attention.layer_norm_rms_epsilon", Value{s.rms_eps});
  f.set("llama.vocab_size", Value{s.n_vocab});
}

void add_tokenizer(GgufFile& f, std::uint32_t n_vocab) {
  SyntheticVocab v = synthetic_vocab(n_vocab);
  f.set("tokenizer.ggml.model", Value{std::string("llama")});
  f.set("tokenizer.ggml.tokens", Value{Array{std::move(v.tokens)}});
  f.set("tokenizer.ggml.scores", Value{Array{std::move(v.scores)}});
  f.set("tokenizer.ggml.token_type", Value{Array{std::move(v.types)}});
  f.set("tokenizer.ggml.unknown_token_id", Value{std::uint32_t{0}});
  f.set("tokenizer.ggml.bos_token_id", Value{std::uint32_t{1}});
  f.set("tokenizer.ggml.eos_token_id", Value{std::uint32_t{2}});
  f.set("tokenizer.ggml.add_bos_token", Value{true});
  f.set("tokenizer.ggml.add_eos_token", Value{false});
}

void add_tensors(GgufFile& f, const ModelShape& s, GgmlType w) {
  const std::uint64_t embd = s.n_embd;
  const std::uint64_t q = std::uint64_t{s.n_head} * s.head_dim_k;
  const std::uint64_t kv = std::uint64_t{s.n_head_kv} * s.head_dim_k;
  const auto add = [&f](std::string name, std::vector<std::uint64_t> ne, GgmlType type) {
    f.tensors.push_back(TensorInfo{std::move(name), std::move(ne), type, 0});
  };
  add("token_embd.weight", {embd, s.n_vocab}, w);
  for (std::uint32_t i = 0; i < s.n_layer; ++i) {
    const std::string blk = fmt::format("blk.{}.", i);
    add(blk + "attn_norm.weight", {embd}, GgmlType::f32);
    add(blk + "attn_q.weight", {embd, q}, w);
    add(blk + "attn_k.weight", {embd, kv}, w);
    add(blk + "attn_v.weight", {embd, kv}, w);
    add(blk + "attn_output.weight", {q, embd}, w);
    add(blk + "ffn_norm.weight", {embd}, GgmlType::f32);
    add(blk + "ffn_gate.weight", {embd, s.n_ff}, w);
    add(blk + "ffn_up.weight", {embd, s.n_ff}, w);
    add(blk + "ffn_down.weight", {s.n_ff, embd}, w);
  }
  add("output_norm.weight", {embd}, GgmlType::f32);
  add("output.weight", {embd, s.n_vocab}, w);
}

// Seed of one tensor's generator: FNV-1a of the name, mixed with the seed by splitmix64.
std::uint64_t tensor_seed(std::uint64_t seed, std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  std::uint64_t z = seed ^ h;
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Sum of four 16-bit uniforms from one draw, scaled to mean 0 and standard deviation 0.02. Plain
// arithmetic on the engine's output, so it is the same everywhere (std::normal_distribution is
// not).
float draw_weight(std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  double sum = 0.0;
  for (int lane = 0; lane < 4; ++lane) {
    sum += (static_cast<double>((r >> (16 * lane)) & 0xFFFFU) + 0.5) / 65536.0;
  }
  return static_cast<float>((sum - 2.0) * std::sqrt(3.0) * kWeightStddev);
}

void store(float value, GgmlType type, std::uint8_t* out) {
  if (type == GgmlType::f32) {
    std::memcpy(out, &value, 4);
  } else {
    const std::uint16_t h = float_to_half(value);
    std::memcpy(out, &h, 2);
  }
}

}  // namespace

std::vector<std::string> synthetic_shape_problems(const ModelShape& shape) {
  std::vector<std::string> problems = llama_shape_problems(shape);
  if (shape.arch != "llama") {
    problems.push_back(fmt::format("architecture must be llama, not '{}'", shape.arch));
  }
  if (!shape.n_head_kv_layers.empty()) {
    problems.push_back("per-layer KV head counts are not supported in synthetic models");
  }
  if (shape.n_vocab != 0 && shape.n_vocab < synthetic_vocab_base_size()) {
    problems.push_back(fmt::format("vocabulary size must be at least {}, not {}",
                                   synthetic_vocab_base_size(), shape.n_vocab));
  }
  if (shape.head_dim_k != 0 && shape.n_embd / std::max(shape.n_head, 1U) != shape.head_dim_k) {
    problems.push_back(
        fmt::format("head dim {} must equal embedding width / head count", shape.head_dim_k));
  }
  return problems;
}

GgufFile synthetic_model(const ModelShape& shape, GgmlType weight_type) {
  if (weight_type != GgmlType::f16 && weight_type != GgmlType::f32) {
    throw InputError(fmt::format("synthetic weights must be f16 or f32, not {}",
                                 ggml_type_info(weight_type).name));
  }
  if (auto problems = synthetic_shape_problems(shape); !problems.empty()) {
    throw InputError(problems);
  }
  GgufFile f;
  add_hparams(f, shape, weight_type);
  add_tokenizer(f, shape.n_vocab);
  add_tensors(f, shape, weight_type);
  assign_offsets(f);
  return f;
}

std::uint64_t synthetic_model_bytes(const ModelShape& shape, GgmlType weight_type) {
  const GgufFile f = synthetic_model(shape, weight_type);
  return serialize_header(f).size() + data_section_bytes(f);
}

void synthesize_tensor_data(const TensorInfo& tensor, std::uint64_t seed, const ByteSink& sink) {
  if (tensor.type != GgmlType::f16 && tensor.type != GgmlType::f32) {
    throw Error(fmt::format("tensor '{}': synthetic data is f16 or f32 only", tensor.name));
  }
  const std::size_t elem_bytes = tensor.type == GgmlType::f32 ? 4 : 2;
  const bool is_norm = tensor.name.ends_with("_norm.weight");
  // The output rows of every token that is not a normal text piece (control, byte and unused
  // tokens) are zero, so greedy decoding always picks a printable piece: the server then
  // streams one event per token, never holding back bytes of an unfinished UTF-8 character.
  std::vector<std::int32_t> token_types;
  if (tensor.name == "output.weight" && tensor.ne.size() == 2) {
    token_types = synthetic_vocab(static_cast<std::uint32_t>(tensor.ne[1])).types;
  }
  const std::uint64_t row_len = tensor.ne.empty() ? 1 : tensor.ne[0];
  std::mt19937_64 rng(tensor_seed(seed, tensor.name));
  std::vector<std::uint8_t> buf;
  const std::uint64_t n = element_count(tensor);
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t m = std::min(kChunkElements, n - done);
    buf.resize(m * elem_bytes);
    for (std::uint64_t i = 0; i < m; ++i) {
      float w = is_norm ? 1.0F : draw_weight(rng);
      const std::uint64_t row = (done + i) / row_len;
      if (row < token_types.size() && token_types[row] != 1) {
        w = 0.0F;
      }
      store(w, tensor.type, buf.data() + i * elem_bytes);
    }
    sink(buf);
    done += m;
  }
}

std::uint16_t float_to_half(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000U);
  const std::uint32_t exp = (x >> 23) & 0xFFU;
  std::uint32_t mant = x & 0x7FFFFFU;
  if (exp == 0xFFU) {  // infinity stays infinity, NaN stays a (quiet) NaN
    return static_cast<std::uint16_t>(sign | 0x7C00U | (mant != 0 ? 0x200U : 0U));
  }
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) {
    return static_cast<std::uint16_t>(sign | 0x7C00U);
  }
  if (e <= 0) {  // a subnormal half, or zero
    if (e < -10) {
      return sign;
    }
    mant |= 0x800000U;
    const auto shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1U << shift) - 1U);
    const std::uint32_t half = 1U << (shift - 1U);
    h += (rem > half || (rem == half && (h & 1U) != 0)) ? 1U : 0U;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1FFFU;
  h += (rem > 0x1000U || (rem == 0x1000U && (h & 1U) != 0)) ? 1U : 0U;  // may carry to infinity
  return static_cast<std::uint16_t>(sign | h);
}

}  // namespace kvbench::gguf
