#include "harness/process/run_capture.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "harness/process/fd.h"

namespace kvbench::process {
namespace {

using std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr milliseconds kStopGrace{500};

milliseconds remaining_until(SteadyTime deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  return std::max(milliseconds{0}, std::chrono::ceil<milliseconds>(left));
}

// Reads what is available on `fd` into `sink` (keeping at most max_bytes); false at end of file.
bool drain_once(int fd, std::string& sink, std::size_t max_bytes, bool& truncated) {
  std::array<char, 65536> buffer{};
  ssize_t n = 0;
  do {
    n = ::read(fd, buffer.data(), buffer.size());
  } while (n == -1 && errno == EINTR);
  if (n <= 0) {
    return false;
  }
  const auto got = static_cast<std::size_t>(n);
  const std::size_t room = max_bytes - std::min(max_bytes, sink.size());
  sink.append(buffer.data(), std::min(room, got));
  truncated = truncated || got > room;
  return true;
}

// Collects both streams until both close or the deadline passes; false on timeout.
bool collect(int out_fd, int err_fd, SteadyTime deadline, std::size_t max_bytes,
             CaptureResult& result) {
  std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.stdout_text, &result.stderr_text};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const milliseconds left = remaining_until(deadline);
    if (left.count() == 0) {
      return false;
    }
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      return false;
    }
    for (std::size_t i = 0; i < fds.size() && ready > 0; ++i) {
      if (fds[i].fd >= 0 && fds[i].revents != 0 &&
          !drain_once(fds[i].fd, *sinks[i], max_bytes, result.truncated)) {
        fds[i].fd = -1;  // poll ignores negative descriptors
      }
    }
  }
  return true;
}

}  // namespace

CaptureResult run_capture(SpawnSpec spec, milliseconds timeout, std::size_t max_bytes) {
  const SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  spec.log_path.reset();
  spec.stdout_fd = out.write_end.get();
  spec.stderr_fd = err.write_end.get();
  ChildProcess child = ChildProcess::spawn(spec);
  // Only the child holds the write ends now, so end of file means it (and its group) closed them.
  out.write_end.reset();
  err.write_end.reset();

  CaptureResult result;
  bool finished = collect(out.read_end.get(), err.read_end.get(), deadline, max_bytes, result);
  if (finished) {
    result.status = child.wait_for(remaining_until(deadline));
    finished = result.status.has_value();
  }
  if (!finished) {
    result.timed_out = true;
    result.status = child.stop(kStopGrace);
  }
  return result;
}

CaptureResult run_capture(const std::vector<std::string>& argv, milliseconds timeout,
                          std::size_t max_bytes) {
  SpawnSpec spec;
  spec.argv = argv;
  return run_capture(std::move(spec), timeout, max_bytes);
}

}  // namespace kvbench::process
