#include "harness/gguf/gguf_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::gguf {
namespace {

constexpr std::uint64_t kFirstPrefixBytes = std::uint64_t{1} << 20;

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

GgufHeader read_gguf_header(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!in || ec) {
    throw InputError(fmt::format("cannot read GGUF file '{}': {}", path.string(),
                                 ec ? ec.message() : errno_text()));
  }
  std::vector<std::uint8_t> prefix;
  for (std::uint64_t want = std::min<std::uint64_t>(kFirstPrefixBytes, size);;
       want = std::min<std::uint64_t>(want * 2, size)) {
    const std::size_t have = prefix.size();
    prefix.resize(want);
    in.read(reinterpret_cast<char*>(prefix.data() + have),
            static_cast<std::streamsize>(want - have));
    if (static_cast<std::uint64_t>(in.gcount()) != want - have) {
      throw InputError(fmt::format("cannot read GGUF file '{}': short read", path.string()));
    }
    try {
      if (auto file = parse_header(prefix, size)) {
        return GgufHeader{std::move(*file), size};
      }
    } catch (const InputError& e) {
      throw InputError(fmt::format("'{}': {}", path.string(), e.what()));
    }
    if (want >= kMaxHeaderBytes) {
      throw InputError(fmt::format("'{}': GGUF metadata is larger than {} MiB", path.string(),
                                   kMaxHeaderBytes >> 20));
    }
  }
}

}  // namespace kvbench::gguf
