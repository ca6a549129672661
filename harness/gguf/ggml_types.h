#pragma once
// The ggml tensor element types: ids as stored in GGUF tensor infos, names as llama.cpp prints
// them (and accepts for --cache-type-k/-v), and the block layout that fixes a row's byte size.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace kvbench::gguf {

// Ids from ggml.h's enum ggml_type. Ids 4, 5, 31-33 and 36-38 are retired and unknown here.
enum class GgmlType : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
  nvfp4 = 40,
  q1_0 = 41,
  q2_0 = 42,
};

// One row of the type table: `block_size` elements are stored in `block_bytes` bytes.
struct GgmlTypeInfo {
  GgmlType type;
  std::string_view name;  // lower case, as ggml_type_name() prints it: "q8_0", "bf16", "q4_K"
  std::uint32_t block_size;
  std::uint32_t block_bytes;
};

// Every known type, in id order.
std::span<const GgmlTypeInfo> ggml_types();

// The table row of a raw type id from a file; nullptr when the id is unknown or retired.
const GgmlTypeInfo* find_ggml_type(std::uint32_t id);

// The table row of a known type (never null for a GgmlType value listed above).
const GgmlTypeInfo& ggml_type_info(GgmlType type);

// A type by name, case-insensitive ("q8_0", "F16", "q4_k"); std::nullopt when unknown.
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// The types llama.cpp accepts for its KV cache (--cache-type-k/-v), in its help order.
std::span<const GgmlType> kv_cache_types();

// A KV cache type by its name as llama.cpp's --cache-type-k/-v take it (exact, lower case: "q8_0");
// std::nullopt for a name that is not one of kv_cache_types().
std::optional<GgmlType> kv_cache_type(std::string_view name);

// The type stores its values in blocks with a scale (q8_0, q4_0, iq4_nl, ...), not one float each
// (f32, f16, bf16). A quantized V cache needs flash attention in llama.cpp.
bool quantized(GgmlType type);

// `name` is a quantized KV cache type ("q8_0"); false for "f16", "f32", "bf16" and unknown names.
bool quantized_cache_type(std::string_view name);

// Bytes of a row of `n` elements. Throws kvbench::InputError when n is not a multiple of the
// block size (e.g. a q8_0 row of 48 elements). row_size(q8_0, 4096) == 4352.
std::uint64_t row_size(GgmlType type, std::uint64_t n);

}  // namespace kvbench::gguf
