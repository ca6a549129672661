#pragma once
// StandIns for the process tests: looking processes up in /proc, bounded polling, scratch files,
// and forked stand-in processes that act as a kvbench which gets interrupted or dies.

#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace kvbench::process::testing {

inline constexpr std::chrono::seconds kBound{10};

struct StatLine {
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
};

// State, parent and group of `pid` from /proc/<pid>/stat; nullopt when there is no such entry.
inline std::optional<StatLine> read_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) {
    return std::nullopt;
  }
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  StatLine stat;
  rest >> stat.state >> stat.ppid >> stat.pgrp;
  return stat;
}

inline bool proc_entry_exists(pid_t pid) {
  return std::filesystem::exists("/proc/" + std::to_string(pid));
}

// Dead: no /proc entry, or a zombie left for a reaper that is not kvbench (an orphan's new parent).
inline bool is_dead(pid_t pid) {
  const auto stat = read_stat(pid);
  return !stat || stat->state == 'Z';
}

// Live (non-zombie) members of process group `pgid`.
inline std::vector<pid_t> live_group_members(pid_t pgid) {
  std::vector<pid_t> members;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const pid_t pid = std::stoi(name);
    const auto stat = read_stat(pid);
    if (stat && stat->pgrp == pgid && stat->state != 'Z') {
      members.push_back(pid);
    }
  }
  return members;
}

// Polls `done` every 10 ms until it holds or kBound passes; returns its last value.
template <typename Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The other members of `first`'s group once it has `count` live members in all (bounded wait).
inline std::vector<pid_t> wait_for_group(pid_t first, size_t count) {
  std::vector<pid_t> others;
  eventually([&] { return live_group_members(first).size() == count; });
  for (pid_t pid : live_group_members(first)) {
    if (pid != first) {
      others.push_back(pid);
    }
  }
  return others;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh directory under the temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("kvbench-process-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter));
    std::filesystem::create_directories(path_);
    path_ = std::filesystem::canonical(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A forked stand-in process with a pipe from it and one to it.
struct StandIn {
  pid_t pid = -1;
  int from_stand_in = -1;  // test reads
  int to_stand_in = -1;    // test writes
};

// Forks; the stand-in runs body(int write_fd, int read_fd) and then _exit(0) (exit code 99 if the
// body throws). The test's stdio buffers are flushed first so the stand-in cannot repeat them.
template <typename Body>
StandIn fork_stand_in(Body body) {
  int up[2];
  int down[2];
  if (pipe(up) != 0 || pipe(down) != 0) {
    return {};
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(up[0]);
    close(down[1]);
    try {
      body(up[1], down[0]);
    } catch (...) {
      _exit(99);
    }
    _exit(0);
  }
  close(up[1]);
  close(down[0]);
  return StandIn{pid, up[0], down[1]};
}

// Reads one int the stand-in wrote, waiting at most kBound; nullopt on timeout or end of file.
inline std::optional<int> read_int(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kBound).count())) != 1) {
    return std::nullopt;
  }
  int value = 0;
  return read(fd, &value, sizeof value) == static_cast<ssize_t>(sizeof value)
             ? std::optional<int>(value)
             : std::nullopt;
}

inline void write_int(int fd, int value) {
  [[maybe_unused]] const ssize_t n = write(fd, &value, sizeof value);
}

// Waits for the stand-in to end (bounded: SIGKILLed after kBound) and returns its wait status.
inline int finish_stand_in(StandIn& stand_in) {
  int status = 0;
  if (!eventually([&] { return waitpid(stand_in.pid, &status, WNOHANG) == stand_in.pid; })) {
    kill(stand_in.pid, SIGKILL);
    waitpid(stand_in.pid, &status, 0);
    status = -1;
  }
  close(stand_in.from_stand_in);
  close(stand_in.to_stand_in);
  return status;
}

}  // namespace kvbench::process::testing
