// Files that appear whole or not at all, and targets that are no files: writing to /dev/null or a
// pipe writes through them and leaves them as they were.

#include "harness/core/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kvbench {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, AFileAppearsWholeOnCommitAndNotBefore) {
  const fs::path dir = fs::temp_directory_path() / ("kvbench-atomic-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path target = dir / "out.txt";
  {
    AtomicFileWriter w(target);
    w.write("half");
    EXPECT_FALSE(fs::exists(target));
  }
  EXPECT_FALSE(fs::exists(target)) << "destroyed without commit: nothing";
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 0)
      << "and no temporary file left";
  AtomicFileWriter w(target);
  w.write("whole");
  w.commit();
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "whole");
  fs::remove_all(dir);
}

TEST(AtomicFile, ADeviceIsWrittenInPlaceAndStaysADevice) {
  struct stat before {};
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  AtomicFileWriter w("/dev/null");
  w.write("nothing to keep");
  w.commit();
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode)) << "/dev/null is still the device";
  EXPECT_EQ(after.st_rdev, before.st_rdev);
}

}  // namespace
}  // namespace kvbench
