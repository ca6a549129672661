#include "harness/process/run_capture.h"

#include <chrono>
#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::process {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTimeout{10000};

TEST(RunCapture, SeparatesStdoutAndStderrAndKeepsTheExitCode) {
  const CaptureResult result =
      run_capture(std::vector<std::string>{"sh", "-c", "echo out; echo err >&2; exit 4"}, kTimeout);
  EXPECT_EQ(result.stdout_text, "out\n");
  EXPECT_EQ(result.stderr_text, "err\n");
  ASSERT_TRUE(result.status.has_value());
  EXPECT_EQ(result.status->describe(), "exited with code 4");
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.truncated);
}

TEST(RunCapture, ReadsMoreThanAPipeHolds) {
  const CaptureResult result =
      run_capture(std::vector<std::string>{"head", "-c", "300000", "/dev/zero"}, kTimeout);
  EXPECT_EQ(result.stdout_text, std::string(300000, '\0'));
  EXPECT_TRUE(result.status && result.status->success());
}

TEST(RunCapture, TruncatesEachStreamAtMaxBytes) {
  const CaptureResult result = run_capture(
      std::vector<std::string>{"sh", "-c", "printf abcdefgh; printf 12345678 >&2"}, kTimeout, 3);
  EXPECT_EQ(result.stdout_text, "abc");
  EXPECT_EQ(result.stderr_text, "123");
  EXPECT_TRUE(result.truncated);
  EXPECT_TRUE(result.status && result.status->success());
}

TEST(RunCapture, StopsACommandAtTheTimeout) {
  const CaptureResult result = run_capture(
      std::vector<std::string>{"sh", "-c", "echo started; exec sleep 30"}, milliseconds{300});
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.stdout_text, "started\n");
  ASSERT_TRUE(result.status.has_value());
  EXPECT_EQ(result.status->kind, ExitStatus::Kind::signaled);
  EXPECT_EQ(result.status->signal, SIGTERM);
}

TEST(RunCapture, PassesTheSpecEnvironment) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "printf '%s' \"$KVBENCH_CAPTURE\""};
  spec.env_set = {{"KVBENCH_CAPTURE", "value with spaces"}};
  const CaptureResult result = run_capture(spec, kTimeout);
  EXPECT_EQ(result.stdout_text, "value with spaces");
}

TEST(RunCapture, MissingProgramThrows) {
  EXPECT_THROW(run_capture(std::vector<std::string>{"kvbench-no-such-tool", "--version"}, kTimeout),
               Error);
}

}  // namespace
}  // namespace kvbench::process
