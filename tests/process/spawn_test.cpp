// What the child gets: its arguments verbatim, its environment, directory, stdio and signal
// state; and how spawn() fails.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/process/child.h"
#include "tests/process/test_util.h"

namespace kvbench::process {
namespace {

using std::chrono::milliseconds;
using testing::read_text;
using testing::TempDir;

// Runs spec to completion with its output in a fresh log file and returns what it wrote.
std::string run_logged(SpawnSpec spec, const TempDir& dir) {
  spec.log_path = dir.path() / "log";
  ChildProcess child = ChildProcess::spawn(spec);
  const auto status = child.wait_for(milliseconds{10000});
  EXPECT_TRUE(status && status->success()) << (status ? status->describe() : "still running");
  return read_text(*spec.log_path);
}

std::string spawn_error(const SpawnSpec& spec) {
  try {
    ChildProcess::spawn(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Spawn, ArgumentsReachTheProgramVerbatim) {
  TempDir dir;
  SpawnSpec spec;
  spec.argv = {"printf",   "%s\\n",      "; rm -rf x", "$(id)", "`id`",        "a b",
               "'single'", "\"double\"", "*",          "",      "back\\slash", "new\nline"};
  EXPECT_EQ(run_logged(spec, dir),
            "; rm -rf x\n$(id)\n`id`\na b\n'single'\n\"double\"\n*\n\nback\\slash\nnew\nline\n");
}

TEST(Spawn, EnvironmentIsSetOverriddenAndUnset) {
  ASSERT_EQ(setenv("KVBENCH_OVERRIDE_ME", "old", 1), 0);
  ASSERT_EQ(setenv("KVBENCH_REMOVE_ME", "gone", 1), 0);
  TempDir dir;
  SpawnSpec spec;
  spec.argv = {"env"};
  spec.env_set = {{"KVBENCH_TEST_VALUE", "hello world; $(id)"}, {"KVBENCH_OVERRIDE_ME", "new"}};
  spec.env_unset = {"KVBENCH_REMOVE_ME"};
  std::string env = "\n";  // so that every variable starts after a newline
  env += run_logged(spec, dir);
  unsetenv("KVBENCH_OVERRIDE_ME");
  unsetenv("KVBENCH_REMOVE_ME");

  EXPECT_NE(env.find("\nKVBENCH_TEST_VALUE=hello world; $(id)\n"), std::string::npos);
  EXPECT_NE(env.find("\nKVBENCH_OVERRIDE_ME=new\n"), std::string::npos);
  EXPECT_EQ(env.find("\nKVBENCH_OVERRIDE_ME=old\n"), std::string::npos);
  EXPECT_EQ(env.find("\nKVBENCH_REMOVE_ME="), std::string::npos);
  EXPECT_NE(env.find("\nPATH="), std::string::npos);  // the rest is inherited
}

TEST(Spawn, StartsInTheWorkingDirectory) {
  TempDir dir;
  SpawnSpec spec;
  spec.argv = {"pwd"};
  spec.working_dir = dir.path();
  EXPECT_EQ(run_logged(spec, dir), dir.path().string() + "\n");
}

TEST(Spawn, LogIsAppendedWithStdoutAndStderr) {
  TempDir dir;
  std::ofstream(dir.path() / "log") << "first\n";
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "echo out; echo err >&2"};
  EXPECT_EQ(run_logged(spec, dir), "first\nout\nerr\n");
}

TEST(Spawn, NewLogIsCreatedWithMode0644UnderTheUmask) {
  TempDir dir;
  SpawnSpec spec;
  spec.argv = {"true"};
  run_logged(spec, dir);
  const mode_t mask = umask(0);
  umask(mask);
  struct stat info {};
  ASSERT_EQ(stat((dir.path() / "log").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644 & ~mask);
}

TEST(Spawn, StdinIsDevNull) {
  TempDir dir;
  SpawnSpec spec;
  spec.argv = {"cat"};  // would block forever on an inherited terminal or pipe
  EXPECT_EQ(run_logged(spec, dir), "");
}

TEST(Spawn, SignalStateAndDescriptorsDoNotLeakIntoTheChild) {
  TempDir dir;
  std::signal(SIGUSR1, SIG_IGN);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR2);
  sigprocmask(SIG_BLOCK, &blocked, nullptr);
  const int opened = open("/dev/null", O_RDONLY);
  const int leaked = dup2(opened, 100);  // not close-on-exec
  close(opened);

  SpawnSpec spec;
  spec.argv = {"sh", "-c", "grep -E '^Sig(Ign|Blk)' /proc/self/status; ls /proc/self/fd"};
  const std::string out = run_logged(spec, dir);
  std::signal(SIGUSR1, SIG_DFL);
  sigprocmask(SIG_UNBLOCK, &blocked, nullptr);
  close(leaked);

  EXPECT_NE(out.find("SigBlk:\t0000000000000000\n"), std::string::npos) << out;
  EXPECT_NE(out.find("SigIgn:\t0000000000000000\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("\n100\n"), std::string::npos) << out;
}

TEST(Spawn, MissingProgramNamesIt) {
  SpawnSpec spec;
  spec.argv = {"kvbench-no-such-program", "--flag"};
  EXPECT_EQ(spawn_error(spec), "cannot start 'kvbench-no-such-program': program not found on PATH");
  spec.argv = {"/nonexistent-kvbench/server"};
  EXPECT_EQ(spawn_error(spec),
            "cannot start '/nonexistent-kvbench/server': No such file or directory");
}

TEST(Spawn, NonExecutableFileIsRefused) {
  TempDir dir;
  const auto script = dir.path() / "server.sh";
  std::ofstream(script) << "#!/bin/sh\n";
  SpawnSpec spec;
  spec.argv = {script.string()};
  EXPECT_EQ(spawn_error(spec), "cannot start '" + script.string() + "': Permission denied");
}

TEST(Spawn, MissingWorkingDirectoryAndLogDirectoryAreErrors) {
  SpawnSpec spec;
  spec.argv = {"true"};
  spec.working_dir = "/nonexistent-kvbench-dir";
  EXPECT_EQ(spawn_error(spec),
            "cannot start 'true': working directory '/nonexistent-kvbench-dir': No such file or "
            "directory");
  spec.working_dir.reset();
  spec.log_path = "/nonexistent-kvbench-dir/server.log";
  EXPECT_EQ(spawn_error(spec),
            "cannot start 'true': cannot open log file '/nonexistent-kvbench-dir/server.log': No "
            "such file or directory");
}

TEST(Spawn, MalformedSpecsAreRejected) {
  SpawnSpec spec;
  EXPECT_EQ(spawn_error(spec), "cannot start a process: the argument vector names no program");
  spec.argv = {"echo", std::string("a\0b", 3)};
  EXPECT_EQ(spawn_error(spec), "cannot start 'echo': an argument contains a NUL byte");
  spec.argv = {"echo"};
  spec.env_set = {{"A=B", "c"}};
  EXPECT_EQ(spawn_error(spec), "cannot start 'echo': invalid environment variable name 'A=B'");
}

TEST(FindOnPath, FindsProgramsAndRejectsOthers) {
  const auto sh = find_on_path("sh");
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->filename(), "sh");
  EXPECT_EQ(access(sh->c_str(), X_OK), 0);
  EXPECT_EQ(find_on_path("kvbench-no-such-program"), std::nullopt);
  EXPECT_EQ(find_on_path("/etc/passwd"), std::nullopt);  // exists, not executable
  EXPECT_EQ(find_on_path(""), std::nullopt);
}

}  // namespace
}  // namespace kvbench::process
