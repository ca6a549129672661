#include "harness/process/child.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "harness/process/signals.h"

namespace kvbench::process {
namespace {

using std::chrono::milliseconds;

// Used by exec when PATH is unset (glibc's default search path, minus the current directory).
constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

bool is_executable_file(const std::filesystem::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// Polls `done` with a growing pause (1 ms up to 20 ms) until it returns true or `timeout` passes.
template <typename Done>
bool poll_until(milliseconds timeout, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  milliseconds pause{1};
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, milliseconds{20});
  }
  return true;
}

}  // namespace

ExitStatus ExitStatus::from_wait_status(int wait_status) {
  ExitStatus status;
  if (WIFEXITED(wait_status)) {
    status.kind = Kind::exited;
    status.code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    status.kind = Kind::signaled;
    status.signal = WTERMSIG(wait_status);
    status.core_dumped = WCOREDUMP(wait_status);
  }
  return status;
}

std::string ExitStatus::describe() const {
  switch (kind) {
    case Kind::exited:
      return fmt::format("exited with code {}", code);
    case Kind::signaled: {
      const char* abbrev = ::sigabbrev_np(signal);
      std::string text = abbrev != nullptr
                             ? fmt::format("killed by signal {} (SIG{})", signal, abbrev)
                             : fmt::format("killed by signal {}", signal);
      return core_dumped ? text + ", core dumped" : text;
    }
    case Kind::unknown:
      break;
  }
  return "exit status unknown";
}

std::optional<std::filesystem::path> find_on_path(const std::string& program) {
  if (program.empty()) {
    return std::nullopt;
  }
  if (program.find('/') != std::string::npos) {
    return is_executable_file(program) ? std::optional<std::filesystem::path>(program)
                                       : std::nullopt;
  }
  const char* env_path = std::getenv("PATH");
  std::string_view search = env_path != nullptr ? env_path : kDefaultPath;
  while (true) {
    const size_t colon = search.find(':');
    std::string_view dir = search.substr(0, colon);
    // An empty entry means the current directory, as for execvp.
    std::filesystem::path candidate =
        dir.empty() ? std::filesystem::path(".") : std::filesystem::path(dir);
    candidate /= program;
    if (is_executable_file(candidate)) {
      return candidate;
    }
    if (colon == std::string_view::npos) {
      return std::nullopt;
    }
    search.remove_prefix(colon + 1);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    stop(kDestructorGrace);
  }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      slot_(std::exchange(other.slot_, -1)),
      program_(std::move(other.program_)),
      status_(std::exchange(other.status_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !status_) {
      stop(kDestructorGrace);
    }
    pid_ = std::exchange(other.pid_, -1);
    slot_ = std::exchange(other.slot_, -1);
    program_ = std::move(other.program_);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

bool ChildProcess::reap(bool block) {
  if (pid_ <= 0 || status_) {
    return true;
  }
  siginfo_t info{};
  const int flags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
  int rc = 0;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, flags);
  } while (rc == -1 && errno == EINTR);
  if (rc == -1) {
    // Reaped elsewhere (SIGCHLD ignored): the pid may be reused already, so signal nothing.
    release_child_slot(std::exchange(slot_, -1));
    status_ = ExitStatus{};
    return true;
  }
  if (info.si_pid == 0) {
    return false;
  }
  // The unreaped child keeps its pid, and with it the group id, from being reused: killing the
  // group's stragglers and releasing the registry slot before the reap is safe.
  ::kill(-pid_, SIGKILL);
  release_child_slot(std::exchange(slot_, -1));
  int wait_status = 0;
  do {
    rc = ::waitpid(pid_, &wait_status, 0);
  } while (rc == -1 && errno == EINTR);
  status_ = rc == pid_ ? ExitStatus::from_wait_status(wait_status) : ExitStatus{};
  return true;
}

bool ChildProcess::running() {
  return pid_ > 0 && !reap(false);
}

std::optional<ExitStatus> ChildProcess::wait_for(milliseconds timeout) {
  if (pid_ <= 0) {
    return std::nullopt;
  }
  poll_until(timeout, [this] { return reap(false); });
  return status_;
}

std::optional<ExitStatus> ChildProcess::stop(milliseconds grace) {
  if (pid_ <= 0 || reap(false)) {
    return status_;
  }
  ::kill(-pid_, SIGTERM);
  // A stopped process only acts on SIGTERM once it continues.
  ::kill(-pid_, SIGCONT);
  if (wait_for(grace)) {
    return status_;
  }
  ::kill(-pid_, SIGKILL);
  reap(true);
  return status_;
}

}  // namespace kvbench::process
