#include "harness/process/fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "harness/core/error.h"

namespace kvbench::process {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) {
    // Linux releases the descriptor even when close() reports EINTR: never retry.
    ::close(fd_);
  }
  fd_ = fd;
}

Pipe make_pipe() {
  std::array<int, 2> fds{-1, -1};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace kvbench::process
