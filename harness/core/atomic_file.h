#pragma once
// Files that appear whole or not at all: written to a temporary file beside the target, flushed
// to disk (every error checked), then renamed into place.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace kvbench {

// Writes a file through a temporary file next to it, renamed into place by commit(). Destroyed
// without commit() (an exception on the way), it removes the temporary file: the target path never
// holds a partly written file. A target that exists and is no regular file or folder (/dev/null, a
// pipe, a terminal) is written in place: a rename would replace the device with a file. Errors
// throw kvbench::Error naming the path.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends bytes to the temporary file.
  void write(std::span<const std::uint8_t> bytes);
  void write(std::string_view text) {
    write(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  }
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
  bool in_place_ = false;  // a device or pipe: written directly, nothing to rename
  std::uint64_t size_ = 0;
};

}  // namespace kvbench
