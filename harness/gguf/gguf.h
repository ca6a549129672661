#pragma once
// GGUF files as values: metadata (every GGUF value type, arrays included), tensor infos, and the
// byte layout. serialize() and parse() are pure functions over bytes; file access lives in
// gguf_io.h. Layout facts: ggml docs/gguf.md and src/gguf.cpp (little-endian, version 3).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/gguf/ggml_types.h"

namespace kvbench::gguf {

// GGUF metadata value type ids (gguf_type in ggml's gguf.h).
enum class ValueType : std::uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};

// The name of a value type as GGUF tools print it: "u32", "f32", "bool", "str", "arr", ...
std::string_view value_type_name(ValueType type);

struct Array;

// Elements of an array, one vector per element type; the alternative index is the type id, so an
// empty array keeps its element type. Nested arrays are allowed by the format (ggml rejects them).
using ArrayItems =
    std::variant<std::vector<std::uint8_t>, std::vector<std::int8_t>, std::vector<std::uint16_t>,
                 std::vector<std::int16_t>, std::vector<std::uint32_t>, std::vector<std::int32_t>,
                 std::vector<float>, std::vector<bool>, std::vector<std::string>,
                 std::vector<Array>, std::vector<std::uint64_t>, std::vector<std::int64_t>,
                 std::vector<double>>;

struct Array {
  ArrayItems items;
  // The GGUF type of every element (kept for an empty array too).
  ValueType element_type() const { return static_cast<ValueType>(items.index()); }
  // Number of elements.
  std::size_t size() const;
  friend bool operator==(const Array& a, const Array& b);
};

// One metadata value; the alternative index is the GGUF type id, so u32 and u64 stay distinct.
// Build one from the exact C++ type: Value{std::uint32_t{32}}, Value{std::string{"llama"}}.
struct Value {
  using Storage = std::variant<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t,
                               std::uint32_t, std::int32_t, float, bool, std::string, Array,
                               std::uint64_t, std::int64_t, double>;
  Storage data;
  ValueType type() const { return static_cast<ValueType>(data.index()); }
  friend bool operator==(const Value& a, const Value& b) = default;
};

// An integer value (any width or signedness) as uint64; std::nullopt for a negative number or a
// non-integer type (bool, float, string, array).
std::optional<std::uint64_t> to_unsigned(const Value& value);

struct KeyValue {
  std::string key;
  Value value;
  friend bool operator==(const KeyValue& a, const KeyValue& b) = default;
};

// A tensor as described in the file: ne[0] is the innermost, contiguous dimension; `offset` is
// relative to the start of the data section.
struct TensorInfo {
  std::string name;
  std::vector<std::uint64_t> ne;
  GgmlType type = GgmlType::f32;
  std::uint64_t offset = 0;
  friend bool operator==(const TensorInfo& a, const TensorInfo& b) = default;
};

struct GgufFile {
  std::uint32_t version = 3;
  std::vector<KeyValue> metadata;  // in file order
  std::vector<TensorInfo> tensors;
  std::uint64_t data_offset = 0;  // start of the data section in the file; set by parse

  // The value of `key`, or nullptr when absent.
  const Value* find(std::string_view key) const;
  // Replaces the value of `key`, or appends the pair when absent.
  void set(std::string key, Value value);
};

constexpr std::uint32_t kDefaultAlignment = 32;
// The largest general.alignment read or written (real files use 32): a file that pads its
// tensor data to more is refused rather than padded to hundreds of MiB.
constexpr std::uint32_t kMaxAlignment = 1U << 20;
constexpr std::size_t kMaxTensorNameBytes = 63;  // ggml's GGML_MAX_NAME is 64 with the NUL
constexpr std::size_t kMaxDims = 4;

// general.alignment, or 32 when absent. Throws kvbench::InputError unless it is a u32 power of 2.
std::uint32_t alignment(const GgufFile& file);

// Elements of a tensor (product of ne; 1 for no dims). Throws kvbench::InputError on overflow.
std::uint64_t element_count(const TensorInfo& tensor);

// Bytes of a tensor's data, unpadded. Throws kvbench::InputError when ne[0] is not a multiple of
// the type's block size.
std::uint64_t tensor_bytes(const TensorInfo& tensor);

// `n` rounded up to a multiple of `align` (a power of two).
std::uint64_t pad_to(std::uint64_t n, std::uint64_t align);

// Sets every tensor's offset so the data is laid out in info order, each padded to alignment().
void assign_offsets(GgufFile& file);

// Bytes of the data section: the end of the last tensor, padded (0 with no tensors).
std::uint64_t data_section_bytes(const GgufFile& file);

// Header, metadata, tensor infos and the zero padding up to the data section, exactly as stored.
// Writes offsets as given (call assign_offsets() first). Throws kvbench::Error for a file parse()
// would reject: version other than 3, duplicate keys or tensor names, a long name, > 4 dims.
std::vector<std::uint8_t> serialize_header(const GgufFile& file);

// A whole file: serialize_header() followed by each tensor's bytes, padded to alignment().
// tensor_data[i] must hold exactly tensor_bytes(file.tensors[i]) bytes, and offsets must be those
// assign_offsets() gives; throws kvbench::Error otherwise.
std::vector<std::uint8_t> serialize(const GgufFile& file,
                                    const std::vector<std::vector<std::uint8_t>>& tensor_data);

// Parses and validates a whole file. Throws kvbench::InputError naming the byte offset and the
// problem (truncated, bad magic, unsupported version, duplicate key, bad type id, offsets that are
// not cumulative, tensor data past the end, ...). Never reads outside `bytes`.
GgufFile parse(std::span<const std::uint8_t> bytes);

// Parses header, metadata and tensor infos from the first bytes of a file of `file_size` bytes
// (unknown when std::nullopt). Returns std::nullopt when `prefix` ends too early and more bytes may
// help; throws kvbench::InputError for invalid input, or for truncation when the prefix is the
// whole file. With file_size known, also checks every tensor's data lies within the file.
std::optional<GgufFile> parse_header(std::span<const std::uint8_t> prefix,
                                     std::optional<std::uint64_t> file_size = std::nullopt);

// The data of tensor `index` inside the bytes of a parsed whole file.
std::span<const std::uint8_t> tensor_data(std::span<const std::uint8_t> file_bytes,
                                          const GgufFile& file, std::size_t index);

}  // namespace kvbench::gguf
