#include "harness/process/child.h"

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "harness/process/signals.h"
#include "tests/process/test_util.h"

namespace kvbench::process {
namespace {

using std::chrono::milliseconds;
using testing::eventually;
using testing::is_dead;
using testing::proc_entry_exists;
using testing::read_text;
using testing::TempDir;
using testing::wait_for_group;

constexpr milliseconds kGrace{5000};

ChildProcess spawn_argv(std::vector<std::string> argv) {
  SpawnSpec spec;
  spec.argv = std::move(argv);
  return ChildProcess::spawn(spec);
}

ExitStatus signaled(int signo) {
  ExitStatus status;
  status.kind = ExitStatus::Kind::signaled;
  status.signal = signo;
  return status;
}

TEST(ExitStatus, DecodesNormalExit) {
  const ExitStatus status = ExitStatus::from_wait_status(3 << 8);
  EXPECT_EQ(status.kind, ExitStatus::Kind::exited);
  EXPECT_EQ(status.code, 3);
  EXPECT_FALSE(status.success());
  EXPECT_EQ(status.describe(), "exited with code 3");
  EXPECT_TRUE(ExitStatus::from_wait_status(0).success());
}

TEST(ExitStatus, DecodesSignalsAndCoreDumps) {
  EXPECT_EQ(ExitStatus::from_wait_status(SIGKILL), signaled(SIGKILL));
  EXPECT_EQ(ExitStatus::from_wait_status(SIGKILL).describe(), "killed by signal 9 (SIGKILL)");
  const ExitStatus segv = ExitStatus::from_wait_status(SIGSEGV | 0x80);
  EXPECT_TRUE(segv.core_dumped);
  EXPECT_EQ(segv.describe(), "killed by signal 11 (SIGSEGV), core dumped");
  EXPECT_EQ(ExitStatus{}.describe(), "exit status unknown");
}

TEST(ChildProcess, StopTerminatesAndReapsSleep) {
  const int live_before = live_child_count();
  ChildProcess child = spawn_argv({"sleep", "30"});
  const pid_t pid = child.pid();
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(child.running());
  EXPECT_EQ(live_child_count(), live_before + 1);
  EXPECT_EQ(testing::read_stat(pid)->pgrp, pid);  // a process group of its own

  const auto status = child.stop(kGrace);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, signaled(SIGTERM));
  EXPECT_EQ(status->describe(), "killed by signal 15 (SIGTERM)");
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.exit_status(), status);
  EXPECT_FALSE(proc_entry_exists(pid));  // reaped: not even a zombie is left
  EXPECT_EQ(live_child_count(), live_before);
}

TEST(ChildProcess, ChildIgnoringSigtermIsKilledAfterGrace) {
  TempDir dir;
  SpawnSpec spec;
  spec.argv = {"bash", "-c", "trap '' TERM; echo ready; sleep 30"};
  spec.log_path = dir.path() / "log";
  ChildProcess child = ChildProcess::spawn(spec);
  // SIGTERM must not arrive before the trap is in place.
  ASSERT_TRUE(eventually([&] { return read_text(*spec.log_path) == "ready\n"; }));

  const auto status = child.stop(milliseconds{200});
  EXPECT_EQ(status, signaled(SIGKILL));
  EXPECT_FALSE(proc_entry_exists(child.pid()));
}

TEST(ChildProcess, StopKillsTheWholeGroup) {
  ChildProcess child = spawn_argv({"bash", "-c", "sleep 30 & wait"});
  const auto others = wait_for_group(child.pid(), 2);
  ASSERT_EQ(others.size(), 1U);
  const pid_t grandchild = others.front();

  child.stop(kGrace);
  EXPECT_FALSE(proc_entry_exists(child.pid()));
  EXPECT_TRUE(eventually([&] { return is_dead(grandchild); }));
}

TEST(ChildProcess, StragglersOfAnExitedLauncherAreKilled) {
  TempDir dir;
  SpawnSpec spec;
  spec.argv = {"bash", "-c", "sleep 30 & echo $!"};
  spec.log_path = dir.path() / "log";
  ChildProcess child = ChildProcess::spawn(spec);
  const auto status = child.wait_for(milliseconds{10000});
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->success());
  const pid_t grandchild = std::stoi(read_text(*spec.log_path));
  EXPECT_TRUE(eventually([&] { return is_dead(grandchild); }));
}

TEST(ChildProcess, ReportsExitCode) {
  ChildProcess child = spawn_argv({"sh", "-c", "exit 3"});
  const auto status = child.wait_for(milliseconds{10000});
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->kind, ExitStatus::Kind::exited);
  EXPECT_EQ(status->code, 3);
  EXPECT_EQ(status->describe(), "exited with code 3");
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.stop(kGrace), status);  // stopping an exited child changes nothing
}

TEST(ChildProcess, WaitForReturnsNothingWhileRunning) {
  ChildProcess child = spawn_argv({"sleep", "30"});
  EXPECT_EQ(child.wait_for(milliseconds{50}), std::nullopt);
  EXPECT_TRUE(child.running());
  EXPECT_EQ(child.exit_status(), std::nullopt);
  EXPECT_EQ(child.stop(kGrace), signaled(SIGTERM));
}

TEST(ChildProcess, DestructorStopsAndReaps) {
  const int live_before = live_child_count();
  pid_t pid = -1;
  {
    ChildProcess child = spawn_argv({"sleep", "30"});
    pid = child.pid();
    ASSERT_TRUE(proc_entry_exists(pid));
  }
  EXPECT_FALSE(proc_entry_exists(pid));
  EXPECT_EQ(live_child_count(), live_before);
}

TEST(ChildProcess, MoveTransfersOwnership) {
  ChildProcess first = spawn_argv({"sleep", "30"});
  const pid_t pid = first.pid();
  ChildProcess second = std::move(first);
  EXPECT_EQ(first.pid(), -1);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_FALSE(first.running());
  EXPECT_EQ(first.stop(kGrace), std::nullopt);
  EXPECT_EQ(second.pid(), pid);
  EXPECT_TRUE(second.running());

  ChildProcess third = spawn_argv({"sleep", "30"});
  const pid_t replaced = third.pid();
  third = std::move(second);  // stops and reaps the child third held
  EXPECT_FALSE(proc_entry_exists(replaced));
  EXPECT_EQ(third.pid(), pid);
  EXPECT_EQ(third.stop(kGrace), signaled(SIGTERM));
}

TEST(ChildProcess, EmptyObjectIsInert) {
  ChildProcess empty;
  EXPECT_EQ(empty.pid(), -1);
  EXPECT_FALSE(empty.running());
  EXPECT_EQ(empty.wait_for(milliseconds{1}), std::nullopt);
  EXPECT_EQ(empty.stop(kGrace), std::nullopt);
}

}  // namespace
}  // namespace kvbench::process
