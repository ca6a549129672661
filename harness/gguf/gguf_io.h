#pragma once
// File access for GGUF: reading just the header part of a (possibly huge) model file, and writing
// a file atomically. The byte-level work is in gguf.h.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

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

// Writes a file through a temporary file next to it, renamed into place by commit(). Destroyed
// without commit() (an exception on the way), it removes the temporary file: the target path never
// holds a partly written file. Errors throw kvbench::Error naming the path.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends bytes to the temporary file.
  void write(std::span<const std::uint8_t> bytes);
  // Appends `n` zero bytes.
  void write_zeros(std::uint64_t n);
  // Bytes written so far.
  std::uint64_t size() const { return size_; }
  // Flushes to disk and renames the temporary file to the target path.
  void commit();

 private:
  std::filesystem::path path_;
  std::string temp_path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace kvbench::gguf
