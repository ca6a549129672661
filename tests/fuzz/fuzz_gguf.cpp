// libFuzzer target for the GGUF reader: any bytes either parse or throw kvbench::InputError
// (anything else escaping is a crash); reading a prefix agrees with reading the whole; a parsed
// version-3 file serializes to bytes that parse back to the same bytes.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "harness/core/error.h"
#include "harness/gguf/gguf.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

namespace gguf = kvbench::gguf;
using kvbench::fuzz::check;
using Bytes = std::span<const std::uint8_t>;

// Same header: compared as serialized bytes, so NaN metadata compares equal to itself.
bool same_header(const gguf::GgufFile& a, const gguf::GgufFile& b) {
  return a.version == b.version && a.data_offset == b.data_offset &&
         a.metadata.size() == b.metadata.size() && a.tensors == b.tensors &&
         (a.version != 3 || gguf::serialize_header(a) == gguf::serialize_header(b));
}

// A prefix of a valid file reads as "more bytes needed" or as the whole file's header.
void check_prefix(Bytes whole, const gguf::GgufFile& file, std::size_t n) {
  const Bytes prefix = whole.first(n);
  for (const std::optional<std::uint64_t> size :
       {std::optional<std::uint64_t>{}, std::optional<std::uint64_t>{whole.size()}}) {
    std::optional<gguf::GgufFile> got;
    try {
      got = gguf::parse_header(prefix, size);
    } catch (const kvbench::InputError&) {
      check(false, "a prefix of a valid file is never an error");
    }
    check(!got || same_header(*got, file), "a prefix reads as the whole file's header");
  }
}

void check_round_trip(Bytes bytes, const gguf::GgufFile& file) {
  std::vector<std::vector<std::uint8_t>> data;
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const Bytes t = gguf::tensor_data(bytes, file, i);
    data.emplace_back(t.begin(), t.end());
  }
  const std::vector<std::uint8_t> written = gguf::serialize(file, data);
  const gguf::GgufFile again = gguf::parse(written);
  check(same_header(again, file), "a serialized file parses to the same header");
  std::vector<std::vector<std::uint8_t>> data_again;
  for (std::size_t i = 0; i < again.tensors.size(); ++i) {
    const Bytes t = gguf::tensor_data(written, again, i);
    data_again.emplace_back(t.begin(), t.end());
  }
  check(data_again == data, "tensor data survive serialization");
  check(gguf::serialize(again, data_again) == written, "serialization is stable");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes bytes(data, size);
  const std::size_t cut =
      size == 0 ? 0 : kvbench::fuzz::hash(kvbench::fuzz::as_text(data, size), 4) % size;
  gguf::GgufFile file;
  try {
    file = gguf::parse(bytes);
  } catch (const kvbench::InputError&) {
    try {  // a prefix of an invalid file may be fine, but must not fail otherwise
      static_cast<void>(gguf::parse_header(bytes.first(cut)));
    } catch (const kvbench::InputError&) {
    }
    return 0;
  }
  check(file.tensors.empty() || file.data_offset <= size, "tensor data start within the file");
  check_prefix(bytes, file, cut);
  check_prefix(bytes, file, size);
  if (file.version == 3) {
    check_round_trip(bytes, file);
  }
  return 0;
}
