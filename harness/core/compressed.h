#pragma once
// A file read as it comes: plain, or compressed with gzip, xz or zstd, told by the bytes it starts
// with (whatever its name says) and decompressed while it is read, never unpacked to disk.

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace kvbench {

enum class Compression { none, gzip, xz, zstd };

std::string_view compression_name(Compression c);

// Which compression `start` (a file's first bytes, six are enough) begins with.
Compression compression_of(std::string_view start);

// A file open for reading through its decompression. Opening a file that cannot be read throws
// InputError naming it; reading data that is damaged, or that ends inside a compressed stream,
// throws InputError naming the file and its compression from the stream's reads. `what` names
// the file's role in those messages ("trace 'x.jsonl.xz' (xz): ...").
class CompressedInput {
 public:
  explicit CompressedInput(const std::string& path, std::string_view what = "file");
  ~CompressedInput();
  CompressedInput(const CompressedInput&) = delete;
  CompressedInput& operator=(const CompressedInput&) = delete;

  std::istream& stream();
  Compression compression() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvbench
