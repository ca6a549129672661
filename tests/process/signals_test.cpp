// kvbench interrupted or dying must not leave a server behind. Each case forks a stand-in that
// plays kvbench (so handlers and exits do not touch the test process), gives it a child that
// starts a grandchild in its group (bash -c 'sleep 30 & wait'), and checks that the grandchild
// dies: only a kill of the whole group reaches it, so these cases fail without the registry.

#include "harness/process/signals.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <thread>

#include <gtest/gtest.h>

#include "harness/process/child.h"
#include "tests/process/test_util.h"

namespace kvbench::process {
namespace {

using std::chrono::milliseconds;
using testing::eventually;
using testing::finish_stand_in;
using testing::fork_stand_in;
using testing::is_dead;
using testing::read_int;
using testing::StandIn;
using testing::wait_for_group;
using testing::write_int;

constexpr const char* kLauncher = "sleep 30 & wait";

ChildProcess spawn_launcher() {
  SpawnSpec spec;
  spec.argv = {"bash", "-c", kLauncher};
  return ChildProcess::spawn(spec);
}

// Sleeps in small steps until `done` holds, for at most 20 s (the test gives up after 10 s).
template <typename Done>
void idle_until(Done done) {
  for (int i = 0; i < 2000 && !done(); ++i) {
    std::this_thread::sleep_for(milliseconds{10});
  }
}

struct Started {
  StandIn stand_in;
  pid_t grandchild = -1;
};

// Starts a stand-in that installs the handlers, spawns the launcher, reports its pid, then runs
// `then(child, to_test, from_test)`. Returns the stand-in and the launcher's grandchild.
template <typename Then>
Started start_kvbench_like(Then then) {
  StandIn stand_in = fork_stand_in([then](int to_test, int from_test) {
    install_signal_handlers();
    ChildProcess child = spawn_launcher();
    write_int(to_test, child.pid());
    then(child, to_test, from_test);
  });
  const auto child_pid = read_int(stand_in.from_stand_in);
  pid_t grandchild = -1;
  if (child_pid) {
    const auto others = wait_for_group(*child_pid, 2);
    grandchild = others.size() == 1 ? others.front() : -1;
  }
  return Started{stand_in, grandchild};
}

TEST(Signals, FirstSigintOnlyRequestsStop) {
  Started started = start_kvbench_like([](ChildProcess& child, int to_test, int) {
    idle_until([] { return stop_requested(); });
    const bool as_expected = stop_requested() && stop_signal() == SIGINT && child.running();
    write_int(to_test, as_expected ? 1 : 0);
    child.stop(milliseconds{5000});
  });
  StandIn& stand_in = started.stand_in;
  const pid_t grandchild = started.grandchild;
  ASSERT_GT(grandchild, 0);
  kill(stand_in.pid, SIGINT);
  EXPECT_EQ(read_int(stand_in.from_stand_in), 1);
  const int status = finish_stand_in(stand_in);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(eventually([&] { return is_dead(grandchild); }));
}

TEST(Signals, SecondSigintKillsChildrenAndExits130) {
  Started started = start_kvbench_like([](ChildProcess&, int to_test, int) {
    idle_until([] { return stop_requested(); });
    write_int(to_test, 1);
    idle_until([] { return false; });  // a run loop that does not get to stop its server
  });
  StandIn& stand_in = started.stand_in;
  const pid_t grandchild = started.grandchild;
  ASSERT_GT(grandchild, 0);
  kill(stand_in.pid, SIGINT);
  // The first signal must be handled before the second is sent, or the two would merge.
  ASSERT_EQ(read_int(stand_in.from_stand_in), 1);
  kill(stand_in.pid, SIGINT);
  const int status = finish_stand_in(stand_in);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  EXPECT_TRUE(eventually([&] { return is_dead(grandchild); }));
}

TEST(Signals, ExitWithoutUnwindingKillsChildren) {
  Started started = start_kvbench_like([](ChildProcess&, int, int from_test) {
    read_int(from_test);
    std::exit(7);  // skips the ChildProcess destructor; the atexit hook remains
  });
  StandIn& stand_in = started.stand_in;
  const pid_t grandchild = started.grandchild;
  ASSERT_GT(grandchild, 0);
  write_int(stand_in.to_stand_in, 1);
  const int status = finish_stand_in(stand_in);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
  EXPECT_TRUE(eventually([&] { return is_dead(grandchild); }));
}

TEST(Signals, TerminateKillsChildren) {
  Started started = start_kvbench_like([](ChildProcess&, int, int from_test) {
    read_int(from_test);
    std::terminate();
  });
  StandIn& stand_in = started.stand_in;
  const pid_t grandchild = started.grandchild;
  ASSERT_GT(grandchild, 0);
  write_int(stand_in.to_stand_in, 1);
  const int status = finish_stand_in(stand_in);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
  EXPECT_TRUE(eventually([&] { return is_dead(grandchild); }));
}

TEST(Signals, FatalSignalKillsChildren) {
  // SIGILL: sanitizers leave its disposition alone, so kvbench's handler is installed for it.
  Started started = start_kvbench_like([](ChildProcess&, int, int from_test) {
    read_int(from_test);
    raise(SIGILL);
  });
  StandIn& stand_in = started.stand_in;
  const pid_t grandchild = started.grandchild;
  ASSERT_GT(grandchild, 0);
  write_int(stand_in.to_stand_in, 1);
  const int status = finish_stand_in(stand_in);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGILL) << status;
  EXPECT_TRUE(eventually([&] { return is_dead(grandchild); }));
}

TEST(Signals, ParentDeathKillsTheChild) {
  // No handlers, no destructor, no atexit: only the kernel's parent-death signal is left.
  StandIn stand_in = fork_stand_in([](int to_test, int) {
    SpawnSpec spec;
    spec.argv = {"sleep", "30"};
    ChildProcess child = ChildProcess::spawn(spec);
    write_int(to_test, child.pid());
    _exit(0);
  });
  const auto child_pid = read_int(stand_in.from_stand_in);
  finish_stand_in(stand_in);
  ASSERT_TRUE(child_pid.has_value());
  EXPECT_TRUE(eventually([&] { return is_dead(*child_pid); }));
}

TEST(Registry, KillAllChildrenSignalsEveryLiveGroup) {
  const int live_before = live_child_count();
  ChildProcess first = spawn_launcher();
  SpawnSpec spec;
  spec.argv = {"sleep", "30"};
  ChildProcess second = ChildProcess::spawn(spec);
  const auto others = wait_for_group(first.pid(), 2);
  ASSERT_EQ(others.size(), 1U);
  EXPECT_EQ(live_child_count(), live_before + 2);

  EXPECT_EQ(kill_all_children(SIGKILL), live_before + 2);
  const auto killed = ExitStatus::from_wait_status(SIGKILL);
  EXPECT_EQ(first.wait_for(milliseconds{10000}), killed);
  EXPECT_EQ(second.wait_for(milliseconds{10000}), killed);
  EXPECT_TRUE(eventually([&] { return is_dead(others.front()); }));
  EXPECT_EQ(live_child_count(), live_before);
}

TEST(Registry, SlotsAreReservedAndReleased) {
  const int live_before = live_child_count();
  const int slot = reserve_child_slot();
  ASSERT_GE(slot, 0);
  EXPECT_EQ(live_child_count(), live_before);  // reserved, but no group yet
  const int other = reserve_child_slot();
  EXPECT_GE(other, 0);
  EXPECT_NE(other, slot);
  commit_child_slot(other, 0x7ffffff0);  // a group id no process has
  EXPECT_EQ(live_child_count(), live_before + 1);
  release_child_slot(other);
  release_child_slot(slot);
  EXPECT_EQ(live_child_count(), live_before);
}

}  // namespace
}  // namespace kvbench::process
