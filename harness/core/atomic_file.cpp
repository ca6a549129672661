#include "harness/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench {

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    temp_path_ = path_.string();
    in_place_ = true;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) {
      throw Error(fmt::format("cannot write '{}': {}", path_.string(), errno_text()));
    }
    return;
  }
  temp_path_ = path_.string() + ".tmp-XXXXXX";
  fd_ = ::mkstemp(temp_path_.data());
  if (fd_ < 0) {
    throw Error(fmt::format("cannot create a file next to '{}': {}", path_.string(), errno_text()));
  }
  ::fchmod(fd_, 0644);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    if (!in_place_) {
      ::unlink(temp_path_.c_str());
    }
  }
}

void AtomicFileWriter::write(std::span<const std::uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw Error(fmt::format("cannot write '{}': {}", temp_path_, errno_text()));
    }
    bytes = bytes.subspan(static_cast<std::size_t>(n));
    size_ += static_cast<std::uint64_t>(n);
  }
}

void AtomicFileWriter::write_zeros(std::uint64_t n) {
  static constexpr std::array<std::uint8_t, 4096> kZeros{};
  while (n > 0) {
    const std::uint64_t m = std::min<std::uint64_t>(n, kZeros.size());
    write(std::span<const std::uint8_t>(kZeros.data(), m));
    n -= m;
  }
}

void AtomicFileWriter::commit() {
  if (in_place_) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      throw Error(fmt::format("cannot close '{}': {}", path_.string(), errno_text()));
    }
    return;
  }
  if (::fsync(fd_) != 0) {
    throw Error(fmt::format("cannot flush '{}': {}", temp_path_, errno_text()));
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    ::unlink(temp_path_.c_str());
    throw Error(fmt::format("cannot close '{}': {}", temp_path_, errno_text()));
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp_path_.c_str());
    throw Error(fmt::format("cannot rename '{}' to '{}': {}", temp_path_, path_.string(), why));
  }
}

}  // namespace kvbench
