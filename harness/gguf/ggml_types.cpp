#include "harness/gguf/ggml_types.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::gguf {
namespace {

constexpr std::uint32_t kQkK = 256;  // super-block of the k-quants and most i-quants

// Block sizes and byte counts follow the block structs in ggml-common.h.
constexpr std::array kTypes{
    GgmlTypeInfo{GgmlType::f32, "f32", 1, 4},
    GgmlTypeInfo{GgmlType::f16, "f16", 1, 2},
    GgmlTypeInfo{GgmlType::q4_0, "q4_0", 32, 18},
    GgmlTypeInfo{GgmlType::q4_1, "q4_1", 32, 20},
    GgmlTypeInfo{GgmlType::q5_0, "q5_0", 32, 22},
    GgmlTypeInfo{GgmlType::q5_1, "q5_1", 32, 24},
    GgmlTypeInfo{GgmlType::q8_0, "q8_0", 32, 34},
    GgmlTypeInfo{GgmlType::q8_1, "q8_1", 32, 36},
    GgmlTypeInfo{GgmlType::q2_k, "q2_K", kQkK, 84},
    GgmlTypeInfo{GgmlType::q3_k, "q3_K", kQkK, 110},
    GgmlTypeInfo{GgmlType::q4_k, "q4_K", kQkK, 144},
    GgmlTypeInfo{GgmlType::q5_k, "q5_K", kQkK, 176},
    GgmlTypeInfo{GgmlType::q6_k, "q6_K", kQkK, 210},
    GgmlTypeInfo{GgmlType::q8_k, "q8_K", kQkK, 292},
    GgmlTypeInfo{GgmlType::iq2_xxs, "iq2_xxs", kQkK, 66},
    GgmlTypeInfo{GgmlType::iq2_xs, "iq2_xs", kQkK, 74},
    GgmlTypeInfo{GgmlType::iq3_xxs, "iq3_xxs", kQkK, 98},
    GgmlTypeInfo{GgmlType::iq1_s, "iq1_s", kQkK, 50},
    GgmlTypeInfo{GgmlType::iq4_nl, "iq4_nl", 32, 18},
    GgmlTypeInfo{GgmlType::iq3_s, "iq3_s", kQkK, 110},
    GgmlTypeInfo{GgmlType::iq2_s, "iq2_s", kQkK, 82},
    GgmlTypeInfo{GgmlType::iq4_xs, "iq4_xs", kQkK, 136},
    GgmlTypeInfo{GgmlType::i8, "i8", 1, 1},
    GgmlTypeInfo{GgmlType::i16, "i16", 1, 2},
    GgmlTypeInfo{GgmlType::i32, "i32", 1, 4},
    GgmlTypeInfo{GgmlType::i64, "i64", 1, 8},
    GgmlTypeInfo{GgmlType::f64, "f64", 1, 8},
    GgmlTypeInfo{GgmlType::iq1_m, "iq1_m", kQkK, 56},
    GgmlTypeInfo{GgmlType::bf16, "bf16", 1, 2},
    GgmlTypeInfo{GgmlType::tq1_0, "tq1_0", kQkK, 54},
    GgmlTypeInfo{GgmlType::tq2_0, "tq2_0", kQkK, 66},
    GgmlTypeInfo{GgmlType::mxfp4, "mxfp4", 32, 17},
    GgmlTypeInfo{GgmlType::nvfp4, "nvfp4", 64, 36},
    GgmlTypeInfo{GgmlType::q1_0, "q1_0", 128, 18},
    GgmlTypeInfo{GgmlType::q2_0, "q2_0", 64, 18},
};

constexpr std::array kKvCacheTypes{GgmlType::f32,    GgmlType::f16,  GgmlType::bf16,
                                   GgmlType::q8_0,   GgmlType::q4_0, GgmlType::q4_1,
                                   GgmlType::iq4_nl, GgmlType::q5_0, GgmlType::q5_1};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::span<const GgmlTypeInfo> ggml_types() {
  return kTypes;
}

const GgmlTypeInfo* find_ggml_type(std::uint32_t id) {
  const auto* it = std::find_if(kTypes.begin(), kTypes.end(), [id](const GgmlTypeInfo& t) {
    return static_cast<std::uint32_t>(t.type) == id;
  });
  return it == kTypes.end() ? nullptr : &*it;
}

const GgmlTypeInfo& ggml_type_info(GgmlType type) {
  const GgmlTypeInfo* info = find_ggml_type(static_cast<std::uint32_t>(type));
  if (info == nullptr) {
    throw Error(fmt::format("unknown ggml type id {}", static_cast<std::uint32_t>(type)));
  }
  return *info;
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const GgmlTypeInfo& t : kTypes) {
    if (equal_ignoring_case(t.name, name)) {
      return t.type;
    }
  }
  return std::nullopt;
}

std::span<const GgmlType> kv_cache_types() {
  return kKvCacheTypes;
}

std::optional<GgmlType> kv_cache_type(std::string_view name) {
  const auto* it = std::find_if(kKvCacheTypes.begin(), kKvCacheTypes.end(),
                                [name](GgmlType t) { return ggml_type_info(t).name == name; });
  return it == kKvCacheTypes.end() ? std::nullopt : std::optional<GgmlType>(*it);
}

bool quantized(GgmlType type) {
  return ggml_type_info(type).block_size > 1;
}

bool quantized_cache_type(std::string_view name) {
  const auto type = kv_cache_type(name);
  return type && quantized(*type);
}

std::uint64_t row_size(GgmlType type, std::uint64_t n) {
  const GgmlTypeInfo& info = ggml_type_info(type);
  if (n % info.block_size != 0) {
    throw InputError(fmt::format("a {} row must hold a multiple of {} elements, got {}", info.name,
                                 info.block_size, n));
  }
  return n / info.block_size * info.block_bytes;
}

}  // namespace kvbench::gguf
