// The GGUF reader. Every read is bounds-checked against the input; counts read from the file are
// checked against the bytes that remain before anything is allocated, so hostile input can neither
// read out of bounds nor ask for huge allocations.

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {
namespace {

static_assert(std::endian::native == std::endian::little, "GGUF is read and written in host order");

constexpr std::uint64_t kMaxKeyBytes = 65535;
constexpr int kMaxArrayDepth = 4;
constexpr std::size_t kValueTypeCount = std::variant_size_v<Value::Storage>;

// Thrown when a prefix ends before the structure does; parse_header() turns it into "read more".
struct PrefixTooShort {};

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return (b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b)
             ? std::numeric_limits<std::uint64_t>::max()
             : a * b;
}

// Smallest encoding of one value of type T: a string is at least its length, an array its header.
template <class T>
constexpr std::uint64_t min_wire_bytes() {
  if constexpr (std::is_same_v<T, std::string>) {
    return 8;
  } else if constexpr (std::is_same_v<T, Array>) {
    return 12;
  } else {
    return sizeof(T);
  }
}

class Parser {
 public:
  Parser(std::span<const std::uint8_t> bytes, std::optional<std::uint64_t> file_size)
      : bytes_(bytes), file_size_(file_size) {}

  GgufFile parse() {
    GgufFile file;
    read_magic();
    file.version = read_version();
    const auto n_tensors = get<std::uint64_t>("tensor count");
    const auto n_kv = get<std::uint64_t>("metadata count");
    read_metadata(file, n_kv);
    const std::uint32_t align = alignment(file);
    read_tensor_infos(file, n_tensors, align);
    file.data_offset = pad_to(pos_, align);
    return file;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(fmt::format("invalid GGUF at byte {}: {}", pos_, message));
  }

  // Ensures `n` more bytes exist: an error past the end of the file, "read more" past the prefix.
  void need(std::uint64_t n, std::string_view what) {
    const std::uint64_t in_file = file_size_ ? *file_size_ - pos_ : bytes_.size() - pos_;
    if (file_size_ && n > in_file) {
      throw InputError(fmt::format("truncated GGUF file at byte {}: {} needs {} bytes, {} remain",
                                   pos_, what, n, in_file));
    }
    if (n > bytes_.size() - pos_) {
      throw PrefixTooShort{};
    }
  }

  template <class T>
  T get(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));  // GGUF is little-endian, as is the host
    pos_ += sizeof(T);
    return v;
  }

  std::string get_string(std::string_view what, std::uint64_t max_bytes) {
    const auto n = get<std::uint64_t>(what);
    if (n > max_bytes) {
      pos_ -= 8;
      fail(fmt::format("{} is {} bytes long, the limit is {}", what, n, max_bytes));
    }
    need(n, what);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }

  void read_magic() {
    static constexpr std::string_view kMagic = "GGUF";
    const std::size_t have = std::min<std::size_t>(bytes_.size(), kMagic.size());
    if (file_size_ == 0U) {
      throw InputError("not a GGUF file (it is empty)");
    }
    if (have > 0 && std::memcmp(bytes_.data(), kMagic.data(), have) != 0) {
      throw InputError("not a GGUF file (the first 4 bytes are not \"GGUF\")");
    }
    need(kMagic.size(), "magic");
    pos_ = kMagic.size();
  }

  std::uint32_t read_version() {
    const auto version = get<std::uint32_t>("version");
    if (version != 0 && (version & 0xFFFFU) == 0) {
      fail(
          fmt::format("version field 0x{:08x} looks byte-swapped: big-endian GGUF files are not "
                      "supported",
                      version));
    }
    if (version != 2 && version != 3) {
      fail(fmt::format("unsupported GGUF version {} (kvbench reads versions 2 and 3)", version));
    }
    return version;
  }

  ValueType get_type(std::string_view what) {
    const auto id = get<std::uint32_t>(what);
    if (id >= kValueTypeCount) {
      pos_ -= 4;
      fail(fmt::format("{} has unknown value type id {}", what, id));
    }
    return static_cast<ValueType>(id);
  }

  void read_metadata(GgufFile& file, std::uint64_t n_kv) {
    need(saturating_mul(n_kv, 13), fmt::format("{} metadata pairs", n_kv));
    file.metadata.reserve(n_kv);
    std::set<std::string, std::less<>> seen;
    for (std::uint64_t i = 0; i < n_kv; ++i) {
      const std::uint64_t key_at = pos_;
      std::string key = get_string(fmt::format("key of metadata pair {}", i), kMaxKeyBytes);
      if (seen.contains(key)) {
        pos_ = key_at;
        fail(fmt::format("duplicate key '{}'", key));
      }
      const std::string what = fmt::format("value of '{}'", key);
      const ValueType type = get_type(what);
      Value value = read_value(type, what, 0);
      seen.insert(key);
      file.metadata.push_back(KeyValue{std::move(key), std::move(value)});
    }
  }

  Value read_value(ValueType type, std::string_view what, int depth) {
    return read_value_as(type, what, depth, std::make_index_sequence<kValueTypeCount>{});
  }

  // Dispatches on the type id: alternative I of Value::Storage is the C++ type of GGUF type I.
  template <std::size_t... I>
  Value read_value_as(ValueType type, std::string_view what, int depth,
                      std::index_sequence<I...> /*ids*/) {
    Value v;
    const auto id = static_cast<std::size_t>(type);
    const auto read_if = [&]<std::size_t J>(std::integral_constant<std::size_t, J> /*j*/) {
      if (id == J) {
        v.data.template emplace<J>(
            read_payload<std::variant_alternative_t<J, Value::Storage>>(what, depth));
      }
    };
    (read_if(std::integral_constant<std::size_t, I>{}), ...);
    return v;
  }

  template <class T>
  T read_payload(std::string_view what, int depth) {
    if constexpr (std::is_same_v<T, std::string>) {
      return get_string(what, std::numeric_limits<std::uint64_t>::max());
    } else if constexpr (std::is_same_v<T, Array>) {
      return read_array(what, depth + 1);
    } else if constexpr (std::is_same_v<T, bool>) {
      const auto b = get<std::uint8_t>(what);
      if (b > 1) {
        pos_ -= 1;
        fail(fmt::format("{} is a bool of value {} (must be 0 or 1)", what, b));
      }
      return b == 1;
    } else {
      return get<T>(what);
    }
  }

  Array read_array(std::string_view what, int depth) {
    if (depth > kMaxArrayDepth) {
      fail(fmt::format("{} nests arrays deeper than {}", what, kMaxArrayDepth));
    }
    const ValueType elem = get_type(fmt::format("array element type of {}", what));
    const auto count = get<std::uint64_t>(fmt::format("array length of {}", what));
    return read_items_as(elem, count, what, depth, std::make_index_sequence<kValueTypeCount>{});
  }

  template <std::size_t... I>
  Array read_items_as(ValueType elem, std::uint64_t count, std::string_view what, int depth,
                      std::index_sequence<I...> /*ids*/) {
    Array a;
    const auto id = static_cast<std::size_t>(elem);
    const auto read_if = [&]<std::size_t J>(std::integral_constant<std::size_t, J> /*j*/) {
      if (id == J) {
        a.items.template emplace<J>(
            read_items<std::variant_alternative_t<J, Value::Storage>>(count, what, depth));
      }
    };
    (read_if(std::integral_constant<std::size_t, I>{}), ...);
    return a;
  }

  template <class T>
  std::vector<T> read_items(std::uint64_t count, std::string_view what, int depth) {
    need(saturating_mul(count, min_wire_bytes<T>()), fmt::format("{} elements of {}", count, what));
    std::vector<T> items;
    items.reserve(count);  // bounded by the bytes that remain
    for (std::uint64_t i = 0; i < count; ++i) {
      items.push_back(read_payload<T>(what, depth));
    }
    return items;
  }

  void read_tensor_infos(GgufFile& file, std::uint64_t n, std::uint32_t align) {
    need(saturating_mul(n, 24), fmt::format("{} tensor infos", n));
    file.tensors.reserve(n);
    std::set<std::string, std::less<>> seen;
    std::uint64_t expected_offset = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t info_at = pos_;
      TensorInfo t = read_tensor_info(i);
      if (!seen.insert(t.name).second) {
        pos_ = info_at;
        fail(fmt::format("duplicate tensor name '{}'", t.name));
      }
      if (t.offset != expected_offset) {
        pos_ -= 8;
        fail(
            fmt::format("tensor '{}' has offset {}, expected {} (tensor data must follow the "
                        "infos' order, each padded to {} bytes)",
                        t.name, t.offset, expected_offset, align));
      }
      const std::uint64_t size = pad_to(tensor_bytes(t), align);
      if (size > std::numeric_limits<std::uint64_t>::max() - expected_offset) {
        fail(fmt::format("tensor '{}': data offsets overflow", t.name));
      }
      expected_offset += size;
      file.tensors.push_back(std::move(t));
    }
  }

  TensorInfo read_tensor_info(std::uint64_t index) {
    TensorInfo t;
    t.name = get_string(fmt::format("name of tensor {}", index), kMaxTensorNameBytes);
    const std::string what = fmt::format("tensor '{}'", t.name);
    const auto n_dims = get<std::uint32_t>(what + " dimension count");
    if (n_dims > kMaxDims) {
      pos_ -= 4;
      fail(fmt::format("{} has {} dimensions, at most {} are allowed", what, n_dims, kMaxDims));
    }
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      t.ne.push_back(get<std::uint64_t>(what + " shape"));
    }
    const auto type_id = get<std::uint32_t>(what + " type");
    if (find_ggml_type(type_id) == nullptr) {
      pos_ -= 4;
      fail(fmt::format("{} has unknown ggml type id {}", what, type_id));
    }
    t.type = static_cast<GgmlType>(type_id);
    t.offset = get<std::uint64_t>(what + " offset");
    return t;
  }

  std::span<const std::uint8_t> bytes_;
  std::optional<std::uint64_t> file_size_;
  std::uint64_t pos_ = 0;
};

void check_data_within(const GgufFile& file, std::uint64_t file_size) {
  if (file.tensors.empty()) {
    return;
  }
  const TensorInfo& last = file.tensors.back();
  const std::uint64_t rel_end = last.offset + tensor_bytes(last);  // bounded by parse's checks
  if (file.data_offset > file_size || rel_end > file_size - file.data_offset) {
    throw InputError(
        fmt::format("truncated GGUF file: tensor data ends at byte {}, the file has {} bytes",
                    file.data_offset > std::numeric_limits<std::uint64_t>::max() - rel_end
                        ? std::numeric_limits<std::uint64_t>::max()
                        : file.data_offset + rel_end,
                    file_size));
  }
}

}  // namespace

std::optional<GgufFile> parse_header(std::span<const std::uint8_t> prefix,
                                     std::optional<std::uint64_t> file_size) {
  if (file_size && *file_size < prefix.size()) {
    throw Error(fmt::format("parse_header: prefix of {} bytes is longer than the file ({} bytes)",
                            prefix.size(), *file_size));
  }
  try {
    GgufFile file = Parser(prefix, file_size).parse();
    if (file_size) {
      check_data_within(file, *file_size);
    }
    return file;
  } catch (const PrefixTooShort&) {
    return std::nullopt;
  }
}

GgufFile parse(std::span<const std::uint8_t> bytes) {
  // With the whole file at hand every shortfall is an error, so this always holds a value.
  return parse_header(bytes, bytes.size()).value();
}

}  // namespace kvbench::gguf
