#include <array>
#include <bit>
#include <cstring>
#include <set>
#include <type_traits>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {
namespace {

static_assert(std::endian::native == std::endian::little, "GGUF is read and written in host order");

constexpr std::array<std::uint8_t, 4> kMagicBytes{'G', 'G', 'U', 'F'};

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}

  template <class T>
  void put(T v) {
    static_assert(std::is_arithmetic_v<T>);
    if constexpr (std::is_same_v<T, bool>) {
      out_.push_back(v ? 1 : 0);
    } else {
      const std::size_t at = out_.size();
      out_.resize(at + sizeof(T));
      std::memcpy(out_.data() + at, &v, sizeof(T));  // host order: GGUF and the host are LE
    }
  }

  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }

  void put_value(const Value& v) {
    std::visit([this](const auto& x) { put_payload(x); }, v.data);
  }

 private:
  template <class T>
  void put_payload(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
      put_string(x);
    } else if constexpr (std::is_same_v<T, Array>) {
      put_array(x);
    } else {
      put<T>(x);
    }
  }

  void put_array(const Array& a) {
    put<std::uint32_t>(static_cast<std::uint32_t>(a.element_type()));
    put<std::uint64_t>(a.size());
    std::visit(
        [this](const auto& items) {
          for (const auto& item : items) {
            using T = typename std::decay_t<decltype(items)>::value_type;
            put_payload(static_cast<const T&>(item));
          }
        },
        a.items);
  }

  std::vector<std::uint8_t>& out_;
};

void check_writable(const GgufFile& file) {
  if (file.version != 3) {
    throw Error(fmt::format("kvbench writes GGUF version 3 only, not {}", file.version));
  }
  std::set<std::string_view> keys;
  for (const KeyValue& kv : file.metadata) {
    if (!keys.insert(kv.key).second) {
      throw Error(fmt::format("duplicate GGUF key '{}'", kv.key));
    }
  }
  std::set<std::string_view> names;
  for (const TensorInfo& t : file.tensors) {
    if (t.name.size() > kMaxTensorNameBytes || t.ne.size() > kMaxDims) {
      throw Error(fmt::format("tensor '{}': name over {} bytes or more than {} dims", t.name,
                              kMaxTensorNameBytes, kMaxDims));
    }
    if (!names.insert(t.name).second) {
      throw Error(fmt::format("duplicate tensor name '{}'", t.name));
    }
  }
}

}  // namespace

std::vector<std::uint8_t> serialize_header(const GgufFile& file) {
  check_writable(file);
  const std::uint32_t align = alignment(file);
  std::vector<std::uint8_t> out(kMagicBytes.begin(), kMagicBytes.end());
  ByteWriter w(out);
  w.put<std::uint32_t>(file.version);
  w.put<std::uint64_t>(file.tensors.size());
  w.put<std::uint64_t>(file.metadata.size());
  for (const KeyValue& kv : file.metadata) {
    w.put_string(kv.key);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(kv.value.type()));
    w.put_value(kv.value);
  }
  for (const TensorInfo& t : file.tensors) {
    w.put_string(t.name);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(t.ne.size()));
    for (std::uint64_t d : t.ne) {
      w.put<std::uint64_t>(d);
    }
    w.put<std::uint32_t>(static_cast<std::uint32_t>(t.type));
    w.put<std::uint64_t>(t.offset);
  }
  out.resize(pad_to(out.size(), align), 0);
  return out;
}

std::vector<std::uint8_t> serialize(const GgufFile& file,
                                    const std::vector<std::vector<std::uint8_t>>& tensor_data) {
  if (tensor_data.size() != file.tensors.size()) {
    throw Error(fmt::format("serialize: {} tensor infos but {} data blocks", file.tensors.size(),
                            tensor_data.size()));
  }
  GgufFile laid_out = file;
  assign_offsets(laid_out);
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const TensorInfo& t = file.tensors[i];
    if (t.offset != laid_out.tensors[i].offset || tensor_data[i].size() != tensor_bytes(t)) {
      throw Error(fmt::format(
          "serialize: tensor '{}' has offset {} and {} data bytes, expected {}"
          " and {}",
          t.name, t.offset, tensor_data[i].size(), laid_out.tensors[i].offset, tensor_bytes(t)));
    }
  }
  std::vector<std::uint8_t> out = serialize_header(file);
  const std::uint32_t align = alignment(file);
  for (const auto& data : tensor_data) {
    out.insert(out.end(), data.begin(), data.end());
    out.resize(pad_to(out.size(), align), 0);
  }
  return out;
}

}  // namespace kvbench::gguf
