#include "harness/process/fd.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "harness/core/error.h"

namespace kvbench::process {

long raise_open_file_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) {
    return -1;
  }
  if (files.rlim_cur < files.rlim_max) {
    rlimit raised = files;
    raised.rlim_cur = files.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      files = raised;
    }
  }
  return files.rlim_cur == RLIM_INFINITY ? -1 : static_cast<long>(files.rlim_cur);
}

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
