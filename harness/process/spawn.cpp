// ChildProcess::spawn: everything the child needs is prepared before fork(); between fork() and
// exec the child only makes async-signal-safe calls, so spawning is safe from a process with
// other threads running.

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/process/child.h"
#include "harness/process/fd.h"
#include "harness/process/signals.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares no header

namespace kvbench::process {
namespace {

// Which step failed in the child before exec; sent to the parent with errno.
enum class ChildStage : int { setpgid, parent_gone, stdio, chdir, exec };

struct ChildFailure {
  ChildStage stage;
  int error;
};

struct ExecPlan {
  std::string path;
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string working_dir;  // empty: stay where we are
  UniqueFd dev_null;
  UniqueFd log;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) {
    pointers.push_back(s.data());
  }
  pointers.push_back(nullptr);
  return pointers;
}

void check_no_nul(const std::string& text, const std::string& program, std::string_view what) {
  if (text.find('\0') != std::string::npos) {
    throw Error(fmt::format("cannot start '{}': {} contains a NUL byte", program, what));
  }
}

void check_env_name(const std::string& name, const std::string& program) {
  if (name.empty() || name.find('=') != std::string::npos) {
    throw Error(
        fmt::format("cannot start '{}': invalid environment variable name '{}'", program, name));
  }
  check_no_nul(name, program, "an environment variable name");
}

std::vector<std::string> child_environment(const SpawnSpec& spec, const std::string& program) {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    env.emplace_back(*entry);
  }
  auto drop = [&env](const std::string& name) {
    std::erase_if(env, [&name](const std::string& entry) {
      return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
             entry[name.size()] == '=';
    });
  };
  for (const std::string& name : spec.env_unset) {
    check_env_name(name, program);
    drop(name);
  }
  for (const auto& [name, value] : spec.env_set) {
    check_env_name(name, program);
    check_no_nul(value, program, "the value of " + name);
    drop(name);
    std::string entry = name;
    entry += '=';
    entry += value;
    env.push_back(std::move(entry));
  }
  return env;
}

UniqueFd open_or_throw(const std::filesystem::path& path, int flags, const std::string& program,
                       std::string_view what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error(fmt::format("cannot start '{}': cannot open {} '{}': {}", program, what,
                            path.string(), std::strerror(errno)));
  }
  return UniqueFd(fd);
}

ExecPlan make_exec_plan(const SpawnSpec& spec) {
  if (spec.argv.empty() || spec.argv.front().empty()) {
    throw Error("cannot start a process: the argument vector names no program");
  }
  const std::string& program = spec.argv.front();
  ExecPlan plan;
  plan.argv_storage = spec.argv;
  for (const std::string& arg : plan.argv_storage) {
    check_no_nul(arg, program, "an argument");
  }
  if (program.find('/') != std::string::npos) {
    plan.path = program;  // exec reports a missing or non-executable file
  } else if (auto found = find_on_path(program)) {
    plan.path = found->string();
  } else {
    throw Error(fmt::format("cannot start '{}': program not found on PATH", program));
  }
  plan.env_storage = child_environment(spec, program);
  plan.argv = pointers_to(plan.argv_storage);
  plan.envp = pointers_to(plan.env_storage);
  if (spec.working_dir) {
    plan.working_dir = spec.working_dir->string();
  }
  plan.dev_null = open_or_throw("/dev/null", O_RDWR, program, "device");
  if (spec.log_path) {
    plan.log = open_or_throw(*spec.log_path, O_WRONLY | O_APPEND | O_CREAT, program, "log file");
  }
  const int sink = plan.log.valid() ? plan.log.get() : plan.dev_null.get();
  plan.stdout_fd = spec.stdout_fd >= 0 ? spec.stdout_fd : sink;
  plan.stderr_fd = spec.stderr_fd >= 0 ? spec.stderr_fd : sink;
  return plan;
}

// --- In the child, between fork() and exec: async-signal-safe calls only. ---

[[noreturn]] void fail_in_child(int report_fd, ChildStage stage) {
  const ChildFailure failure{stage, errno};
  [[maybe_unused]] const ssize_t n = ::write(report_fd, &failure, sizeof failure);
  _exit(127);
}

// Makes `from` the descriptor `to`, without close-on-exec.
bool move_fd(int from, int to) {
  if (from == to) {
    return ::fcntl(to, F_SETFD, 0) == 0;
  }
  return ::dup2(from, to) == to;
}

// kvbench's handlers and blocked signals must not leak into the server: a handled signal is
// reset by exec anyway, but an ignored one (SIGPIPE, say) and the signal mask would survive it.
void reset_signals() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int signo = 1; signo < NSIG; ++signo) {
    if (signo != SIGKILL && signo != SIGSTOP) {
      ::sigaction(signo, &action, nullptr);  // fails harmlessly for the C library's own
    }
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void run_child(const ExecPlan& plan, int report_fd, pid_t parent) {
  reset_signals();
  if (::setpgid(0, 0) != 0) {
    fail_in_child(report_fd, ChildStage::setpgid);
  }
  // If kvbench dies from here on, the kernel kills us. If it died before prctl, we were
  // reparented already: getppid() no longer names it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) {
    errno = ESRCH;
    fail_in_child(report_fd, ChildStage::parent_gone);
  }
  if (!move_fd(plan.dev_null.get(), STDIN_FILENO) || !move_fd(plan.stdout_fd, STDOUT_FILENO) ||
      !move_fd(plan.stderr_fd, STDERR_FILENO)) {
    fail_in_child(report_fd, ChildStage::stdio);
  }
  // Descriptors kvbench opened without O_CLOEXEC (sockets of libraries) stay out of the child.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  if (!plan.working_dir.empty() && ::chdir(plan.working_dir.c_str()) != 0) {
    fail_in_child(report_fd, ChildStage::chdir);
  }
  ::execve(plan.path.c_str(), plan.argv.data(), plan.envp.data());
  fail_in_child(report_fd, ChildStage::exec);
}

// --- Back in the parent. ---

// Reads the child's failure report; nullopt when exec succeeded (the pipe closed empty).
std::optional<ChildFailure> read_failure(int fd) {
  ChildFailure failure{};
  ssize_t n = 0;
  do {
    n = ::read(fd, &failure, sizeof failure);
  } while (n == -1 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof failure)) {
    return failure;
  }
  return std::nullopt;
}

std::string describe_failure(const ExecPlan& plan, const ChildFailure& failure) {
  const std::string& program = plan.argv_storage.front();
  const char* reason = std::strerror(failure.error);
  switch (failure.stage) {
    case ChildStage::exec:
      return plan.path == program
                 ? fmt::format("cannot start '{}': {}", program, reason)
                 : fmt::format("cannot start '{}' ({}): {}", program, plan.path, reason);
    case ChildStage::chdir:
      return fmt::format("cannot start '{}': working directory '{}': {}", program, plan.working_dir,
                         reason);
    case ChildStage::stdio:
      return fmt::format("cannot start '{}': redirecting its output failed: {}", program, reason);
    case ChildStage::setpgid:
      return fmt::format("cannot start '{}': setpgid failed: {}", program, reason);
    case ChildStage::parent_gone:
      break;
  }
  return fmt::format("cannot start '{}': kvbench exited while starting it", program);
}

void reap_failed(pid_t pid) {
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) == -1 && errno == EINTR) {
  }
}

}  // namespace

ChildProcess ChildProcess::spawn(const SpawnSpec& spec) {
  const ExecPlan plan = make_exec_plan(spec);
  const std::string& program = plan.argv_storage.front();
  Pipe report = make_pipe();
  const int slot = reserve_child_slot();
  if (slot < 0) {
    throw Error(fmt::format("cannot start '{}': {} child processes are running already", program,
                            kMaxChildren));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    release_child_slot(slot);
    throw Error(fmt::format("cannot start '{}': fork failed: {}", program, std::strerror(error)));
  }
  if (pid == 0) {
    run_child(plan, report.write_end.get(), parent);
  }
  // Also done here so the group exists before the registry names it (fails harmlessly with
  // EACCES once the child has exec'd, having made the group itself).
  ::setpgid(pid, pid);
  commit_child_slot(slot, pid);
  report.write_end.reset();
  if (const auto failure = read_failure(report.read_end.get())) {
    release_child_slot(slot);
    reap_failed(pid);
    throw Error(describe_failure(plan, *failure));
  }
  return {pid, slot, program};
}

}  // namespace kvbench::process
