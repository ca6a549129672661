#include "harness/process/signals.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <mutex>

namespace kvbench::process {
namespace {

// 0: free, kReserved: taken but the child does not exist yet, > 0: a process group id.
constexpr pid_t kReserved = -1;

static_assert(std::atomic<pid_t>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

std::array<std::atomic<pid_t>, kMaxChildren> g_groups{};
std::atomic<int> g_stop_signal{0};
std::atomic<int> g_stop_count{0};
std::terminate_handler g_previous_terminate = nullptr;

constexpr std::array kStopSignals{SIGINT, SIGTERM, SIGHUP};
constexpr std::array kFatalSignals{SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void on_stop_signal(int signo) {
  const int saved_errno = errno;
  if (g_stop_count.fetch_add(1) == 0) {
    g_stop_signal.store(signo);
    errno = saved_errno;
    return;
  }
  kill_all_children(SIGKILL);
  _exit(128 + signo);
}

// Installed with SA_RESETHAND: after killing the children, the default action (a core dump)
// happens when the signal is raised again.
void on_fatal_signal(int signo) {
  kill_all_children(SIGKILL);
  raise(signo);
}

void kill_children_at_exit() {
  kill_all_children(SIGKILL);
}

void on_terminate() {
  kill_all_children(SIGKILL);
  if (g_previous_terminate != nullptr) {
    g_previous_terminate();
  }
  std::abort();
}

void install_handler(int signo, void (*handler)(int), int flags) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = flags;
  sigaction(signo, &action, nullptr);
}

bool has_default_disposition(int signo) {
  struct sigaction current {};
  return sigaction(signo, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
         (current.sa_flags & SA_SIGINFO) == 0;
}

void install_once() {
  for (int signo : kStopSignals) {
    // SA_RESTART: slow system calls resume; the run loop sees the flag at its next poll.
    install_handler(signo, on_stop_signal, SA_RESTART);
  }
  for (int signo : kFatalSignals) {
    if (has_default_disposition(signo)) {
      install_handler(signo, on_fatal_signal, static_cast<int>(SA_RESETHAND | SA_NODEFER));
    }
  }
  std::atexit(kill_children_at_exit);
  g_previous_terminate = std::set_terminate(on_terminate);
}

}  // namespace

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, install_once);
}

bool stop_requested() {
  return g_stop_signal.load() != 0;
}

int stop_signal() {
  return g_stop_signal.load();
}

int kill_all_children(int signo) {
  int signalled = 0;
  for (auto& group : g_groups) {
    const pid_t pgid = group.load();
    if (pgid > 0 && kill(-pgid, signo) == 0) {
      ++signalled;
    }
  }
  return signalled;
}

int live_child_count() {
  int count = 0;
  for (auto& group : g_groups) {
    if (group.load() > 0) {
      ++count;
    }
  }
  return count;
}

int reserve_child_slot() {
  for (int i = 0; i < kMaxChildren; ++i) {
    pid_t expected = 0;
    if (g_groups[static_cast<std::size_t>(i)].compare_exchange_strong(expected, kReserved)) {
      return i;
    }
  }
  return -1;
}

void commit_child_slot(int slot, pid_t pgid) {
  if (slot >= 0 && slot < kMaxChildren) {
    g_groups[static_cast<std::size_t>(slot)].store(pgid);
  }
}

void release_child_slot(int slot) {
  if (slot >= 0 && slot < kMaxChildren) {
    g_groups[static_cast<std::size_t>(slot)].store(0);
  }
}

}  // namespace kvbench::process
