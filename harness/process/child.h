#pragma once
// A child process kvbench starts (llama-server, ollama serve, a fixture server, a short tool) and
// owns: started from an argument vector (never through a shell), in a process group of its own,
// and never left behind. Stopping signals the whole group, so a launcher script's own children go
// with it; the child is always reaped, so no zombie outlives its ChildProcess.
//
// Three layers keep servers from outliving kvbench:
//  1. ChildProcess's destructor stops the group (SIGTERM, a short grace, then SIGKILL).
//  2. Every live group is in the registry of signals.h: SIGINT/SIGTERM, std::exit, std::terminate
//     and fatal signals kill the registered groups.
//  3. On Linux the child gets PR_SET_PDEATHSIG(SIGKILL): if kvbench is killed outright (SIGKILL),
//     the kernel kills the direct child. Grandchildren are not covered by this layer.
// The kernel ties the parent-death signal to the *thread* that forked, not the process: spawn
// from a thread that lives as long as the child should (the main thread in kvbench).

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbench::process {

// How a child ended, decoded from a wait status.
struct ExitStatus {
  enum class Kind { exited, signaled, unknown };
  Kind kind = Kind::unknown;
  int code = 0;    // exit code when kind == exited
  int signal = 0;  // terminating signal when kind == signaled
  bool core_dumped = false;

  // Decodes a status as filled in by waitpid(). Pure.
  static ExitStatus from_wait_status(int wait_status);
  // True for a normal exit with code 0.
  bool success() const { return kind == Kind::exited && code == 0; }
  // "exited with code 1", "killed by signal 9 (SIGKILL)", "killed by signal 11 (SIGSEGV), core
  // dumped", or "exit status unknown" when something else reaped the child.
  std::string describe() const;
  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};

struct SpawnSpec {
  // argv[0] is the program: a path when it contains '/', else looked up on kvbench's own PATH
  // (not the PATH set in env_set). A relative path with a slash is resolved in working_dir.
  std::vector<std::string> argv;
  // Variables set (or overridden) in the child's environment, which otherwise is kvbench's own.
  std::vector<std::pair<std::string, std::string>> env_set;
  // Variables removed from the child's environment (applied before env_set).
  std::vector<std::string> env_unset;
  // Directory the child starts in; kvbench's current directory when empty.
  std::optional<std::filesystem::path> working_dir;
  // stdout and stderr are both appended to this file (created 0644 if missing, subject to the
  // umask). Without it they go to /dev/null. stdin is always /dev/null.
  std::optional<std::filesystem::path> log_path;
  // Descriptors that replace the log for stdout / stderr when >= 0 (run_capture's pipes). The
  // caller keeps ownership; they only need to stay open until spawn() returns.
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// Owns one running child and its process group. Move-only; not thread-safe (one owner thread).
class ChildProcess {
 public:
  // Grace the destructor gives the group between SIGTERM and SIGKILL.
  static constexpr std::chrono::milliseconds kDestructorGrace{2000};

  // Starts the child and returns once it has exec'd the program. Throws kvbench::Error naming
  // the program when it cannot be found, is not executable, the log file cannot be opened, the
  // working directory does not exist, or too many children are alive at once.
  static ChildProcess spawn(const SpawnSpec& spec);

  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;

  // Process id of the child (also its process group id); -1 for an empty or moved-from object.
  pid_t pid() const { return pid_; }
  // The program as given in argv[0] (for messages).
  const std::string& program() const { return program_; }
  // True while the child has not exited. Never blocks; reaps the child once it has exited and
  // then kills whatever is left in its group (a launcher's stragglers).
  bool running();
  // The exit status once the child has been reaped (by running(), wait_for() or stop()).
  std::optional<ExitStatus> exit_status() const { return status_; }
  // Waits up to `timeout` for the child to exit on its own; returns its status, or nullopt if it
  // is still running. Does not signal it.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // SIGTERM to the group, up to `grace` for the child to exit, then SIGKILL to the group; reaps
  // the child. Returns its status; a no-op returning the known status when already reaped, and
  // nullopt for an empty object.
  std::optional<ExitStatus> stop(std::chrono::milliseconds grace);

 private:
  ChildProcess(pid_t pid, int slot, std::string program)
      : pid_(pid), slot_(slot), program_(std::move(program)) {}
  // Reaps the child if it has exited (blocking until it does when `block`); true once reaped.
  bool reap(bool block);

  pid_t pid_ = -1;
  int slot_ = -1;  // registry slot (signals.h)
  std::string program_;
  std::optional<ExitStatus> status_;
};

// The full path of `program` as exec would find it on kvbench's PATH: the first regular,
// executable file among the PATH entries; nullopt when there is none. A name containing '/' is
// returned as is when it names an executable file.
std::optional<std::filesystem::path> find_on_path(const std::string& program);

}  // namespace kvbench::process
