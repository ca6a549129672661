#include "harness/core/text.h"

#include <gtest/gtest.h>

namespace kvbench {
namespace {

TEST(Text, TrimTakesWhitespaceAndTheLastNewlineOfASysfsFile) {
  EXPECT_EQ(trim("powersave\n"), "powersave");  // scaling_governor as read
  EXPECT_EQ(trim(" \t2400000\r\n"), "2400000");
  EXPECT_EQ(trim("a b\nc"), "a b\nc") << "inside stays";
  EXPECT_EQ(trim("\n \n"), "");
  EXPECT_EQ(trim(""), "");
}

}  // namespace
}  // namespace kvbench
