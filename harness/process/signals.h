#pragma once
// Interruption of kvbench and the registry of live child process groups.
//
// The first SIGINT, SIGTERM or SIGHUP only sets a flag: the run loop polls stop_requested(),
// finishes or abandons the current call, stops its server and writes what it has. A second one
// kills every registered child group with SIGKILL at once and exits with 128 + the signal
// (130 for SIGINT). std::exit, std::terminate and fatal signals (SIGSEGV, SIGBUS, SIGFPE,
// SIGILL, SIGABRT) also kill the registered groups before the process goes.
//
// Everything a signal handler touches is a fixed-size array of lock-free atomics: no allocation,
// no locks, only kill() and _exit().

#include <sys/types.h>

namespace kvbench::process {

// How many children may be alive at once.
inline constexpr int kMaxChildren = 64;

// Installs the SIGINT/SIGTERM/SIGHUP handlers, the fatal-signal handlers (only where the
// disposition is still the default, so sanitizers keep theirs), an atexit hook and a terminate
// handler. Idempotent; call once early from the main thread.
void install_signal_handlers();

// True once SIGINT, SIGTERM or SIGHUP has arrived after install_signal_handlers().
bool stop_requested();
// The first stop signal received (SIGINT, SIGTERM, SIGHUP), or 0 when none.
int stop_signal();

// Sends `signo` to every registered child process group. Async-signal-safe. Returns how many
// groups were signalled. Owners still reap their children (ChildProcess does).
int kill_all_children(int signo);

// Number of registered (live, not yet reaped) child groups.
int live_child_count();

// Registry primitives for ChildProcess. reserve_child_slot() returns a slot index or -1 when all
// kMaxChildren are taken; commit_child_slot() stores the group id (> 0) once the child exists;
// release_child_slot() frees the slot (call before reaping, so a reused pid is never signalled).
int reserve_child_slot();
void commit_child_slot(int slot, pid_t pgid);
void release_child_slot(int slot);

}  // namespace kvbench::process
