#pragma once
// An owned POSIX file descriptor, closed exactly once.

#include <utility>

namespace kvbench::process {

// Raises this process's soft limit on open files to its hard limit (1,024 concurrent streams need
// a socket each beyond the usual soft limit of 1,024). Returns the soft limit now in force.
long raise_open_file_limit();

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset(std::exchange(other.fd_, -1));
    }
    return *this;
  }

  // The descriptor, or -1 when empty.
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes the held descriptor (if any) and takes `fd` instead.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A pipe whose both ends are close-on-exec. Throws kvbench::Error when the system refuses.
struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};
Pipe make_pipe();

}  // namespace kvbench::process
