#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {

std::string_view value_type_name(ValueType type) {
  static constexpr std::array<std::string_view, 13> kNames{
      "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"};
  const auto id = static_cast<std::size_t>(type);
  return id < kNames.size() ? kNames[id] : std::string_view{"?"};
}

std::size_t Array::size() const {
  return std::visit([](const auto& v) { return v.size(); }, items);
}

bool operator==(const Array& a, const Array& b) {
  return a.items == b.items;
}

std::optional<std::uint64_t> to_unsigned(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::optional<std::uint64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if constexpr (std::is_signed_v<T>) {
            if (v < 0) {
              return std::nullopt;
            }
          }
          return static_cast<std::uint64_t>(v);
        } else {
          return std::nullopt;
        }
      },
      value.data);
}

const Value* GgufFile::find(std::string_view key) const {
  auto it = std::find_if(metadata.begin(), metadata.end(),
                         [key](const KeyValue& kv) { return kv.key == key; });
  return it == metadata.end() ? nullptr : &it->value;
}

void GgufFile::set(std::string key, Value value) {
  auto it = std::find_if(metadata.begin(), metadata.end(),
                         [&key](const KeyValue& kv) { return kv.key == key; });
  if (it != metadata.end()) {
    it->value = std::move(value);
  } else {
    metadata.push_back(KeyValue{std::move(key), std::move(value)});
  }
}

std::uint32_t alignment(const GgufFile& file) {
  const Value* v = file.find("general.alignment");
  if (v == nullptr) {
    return kDefaultAlignment;
  }
  const auto* a = std::get_if<std::uint32_t>(&v->data);
  if (a == nullptr) {
    throw InputError(
        fmt::format("general.alignment must be of type u32, not {}", value_type_name(v->type())));
  }
  if (*a == 0 || (*a & (*a - 1)) != 0) {
    throw InputError(fmt::format("general.alignment must be a power of two, not {}", *a));
  }
  if (*a > kMaxAlignment) {
    throw InputError(fmt::format("general.alignment of {} bytes is past the {} that kvbench reads",
                                 *a, kMaxAlignment));
  }
  return *a;
}

std::uint64_t element_count(const TensorInfo& tensor) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t n = 1;
  for (std::uint64_t d : tensor.ne) {
    if (d > kMax || (d != 0 && n > kMax / d)) {
      throw InputError(fmt::format("tensor '{}': element count overflows int64", tensor.name));
    }
    n *= d;
  }
  return n;
}

std::uint64_t tensor_bytes(const TensorInfo& tensor) {
  const std::uint64_t n = element_count(tensor);
  const GgmlTypeInfo& info = ggml_type_info(tensor.type);
  const std::uint64_t ne0 = tensor.ne.empty() ? 1 : tensor.ne[0];
  if (ne0 % info.block_size != 0) {
    throw InputError(
        fmt::format("tensor '{}': ne[0] = {} is not a multiple of the {} block size {}",
                    tensor.name, ne0, info.name, info.block_size));
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const std::uint64_t blocks = n / info.block_size;
  if (blocks > kMax / info.block_bytes) {
    throw InputError(fmt::format("tensor '{}': byte size overflows int64", tensor.name));
  }
  return blocks * info.block_bytes;
}

std::uint64_t pad_to(std::uint64_t n, std::uint64_t align) {
  return (n + align - 1) & ~(align - 1);
}

void assign_offsets(GgufFile& file) {
  const std::uint32_t align = alignment(file);
  std::uint64_t offset = 0;
  for (TensorInfo& t : file.tensors) {
    t.offset = offset;
    const std::uint64_t size = pad_to(tensor_bytes(t), align);
    if (size > std::numeric_limits<std::uint64_t>::max() - offset) {
      throw InputError(fmt::format("tensor '{}': data offset overflows uint64", t.name));
    }
    offset += size;
  }
}

std::uint64_t data_section_bytes(const GgufFile& file) {
  if (file.tensors.empty()) {
    return 0;
  }
  const TensorInfo& last = file.tensors.back();
  return pad_to(last.offset + tensor_bytes(last), alignment(file));
}

std::span<const std::uint8_t> tensor_data(std::span<const std::uint8_t> file_bytes,
                                          const GgufFile& file, std::size_t index) {
  const TensorInfo& t = file.tensors.at(index);
  const std::uint64_t begin = file.data_offset + t.offset;
  const std::uint64_t n = tensor_bytes(t);
  if (begin > file_bytes.size() || n > file_bytes.size() - begin) {
    throw InputError(fmt::format("tensor '{}' lies past the end of the file", t.name));
  }
  return file_bytes.subspan(begin, n);
}

}  // namespace kvbench::gguf
