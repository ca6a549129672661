#include "harness/process/fd.h"

#include <sys/resource.h>

#include <gtest/gtest.h>

namespace kvbench::process {
namespace {

// The soft limit on open files goes up to the hard limit, whatever it was before.
TEST(OpenFileLimit, SoftLimitIsRaisedToTheHardLimit) {
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max <= 64) {
    GTEST_SKIP() << "the hard limit leaves nothing to raise";
  }
  rlimit lowered = before;
  lowered.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  const long now = raise_open_file_limit();
  rlimit after{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  if (before.rlim_max != RLIM_INFINITY) {
    EXPECT_EQ(now, static_cast<long>(before.rlim_max));
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &before), 0);
}

}  // namespace
}  // namespace kvbench::process
