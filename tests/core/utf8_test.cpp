#include "harness/core/utf8.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kvbench {
namespace {

const std::string kBad = "\xEF\xBF\xBD";  // U+FFFD

TEST(ValidUtf8, KeepsValidText) {
  const std::string text =
      "plain ASCII, \xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80 and \xF4\x8F\xBF\xBF";
  EXPECT_EQ(valid_utf8(text), text);
  EXPECT_EQ(valid_utf8(""), "");
}

TEST(ValidUtf8, ReplacesEachBadByte) {
  EXPECT_EQ(valid_utf8("a\x80z"), "a" + kBad + "z");                     // stray continuation
  EXPECT_EQ(valid_utf8("a\xC3"), "a" + kBad);                            // cut before its end
  EXPECT_EQ(valid_utf8("\xE2\x82"), kBad + kBad);                        // cut 3-byte sequence
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kBad + kBad);                        // overlong '/'
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), kBad + kBad + kBad);             // overlong, 3 bytes
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kBad + kBad + kBad);             // surrogate U+D800
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), kBad + kBad + kBad + kBad);  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xFF\xC3\xA9"), kBad + "\xC3\xA9");
}

TEST(ValidUtf8, OutputAlwaysDumpsAsJson) {
  std::string all;
  for (int b = 0; b < 256; ++b) {
    all.push_back(static_cast<char>(b));
    all.push_back(static_cast<char>(255 - b));
  }
  EXPECT_THROW(static_cast<void>(nlohmann::json(all).dump()), nlohmann::json::exception);
  EXPECT_NO_THROW(static_cast<void>(nlohmann::json(valid_utf8(all)).dump()));
}

}  // namespace
}  // namespace kvbench
