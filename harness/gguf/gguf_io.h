#pragma once
// File access for GGUF: reading just the header part of a (possibly huge) model file; files are
// written through kvbench::AtomicFileWriter (core/atomic_file.h). The byte-level work is in
// gguf.h.

#include <cstdint>
#include <filesystem>

#include "harness/core/atomic_file.h"
#include "harness/gguf/gguf.h"

namespace kvbench::gguf {

struct GgufHeader {
  GgufFile file;                 // metadata and tensor infos; no tensor data is read
  std::uint64_t file_bytes = 0;  // size of the file on disk
};

// Upper bound on the header part read_gguf_header() will read.
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{512} << 20;

// Reads metadata and tensor infos of the GGUF file at `path`, reading a growing prefix (1 MiB,
// then doubling) rather than the whole file, and checks the tensor data fits in the file.
// Throws kvbench::InputError naming the path when it cannot be opened or is not valid GGUF.
GgufHeader read_gguf_header(const std::filesystem::path& path);

}  // namespace kvbench::gguf
