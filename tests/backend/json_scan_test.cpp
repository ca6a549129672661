#include "harness/backend/json_scan.h"

#include <array>
#include <string_view>

#include <gtest/gtest.h>

namespace kvbench::backend {
namespace {

using Kind = ScannedMember::Kind;

constexpr std::array<std::string_view, 4> kKeys = {"a", "b", "c", "d"};

// scan_members over kKeys; `ok` says whether it accepted the text.
struct Scan {
  bool ok = false;
  std::array<ScannedMember, kKeys.size()> m;
};

Scan scan(std::string_view text) {
  Scan s;
  s.ok = scan_members(text, kKeys, s.m);
  return s;
}

TEST(ScanMembers, ReadsTheWantedMembersAndSkipsTheRest) {
  const auto s =
      scan(R"({"x":{"a":1,"b":[1,2]},"a":true,"y":[{"c":"no"}],"b":"h\u00e9","c":null})");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.m[0].kind, Kind::boolean);
  EXPECT_TRUE(s.m[0].boolean);
  EXPECT_EQ(s.m[1].kind, Kind::string);
  EXPECT_EQ(s.m[1].size, 3U) << "the decoded string: 'h' and the two bytes of U+00E9";
  EXPECT_EQ(s.m[2].kind, Kind::null);
  EXPECT_EQ(s.m[3].kind, Kind::absent) << "a nested \"d\" or \"a\" is not a top-level member";
}

TEST(ScanMembers, CountsOnlyTheTopLevelElementsOfAnArray) {
  const auto s = scan(R"({"a":[1,[2,3],{"b":[4]},"x",null],"b":[],"c":{"d":[1,2]},"d":[[]]})");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.m[0].kind, Kind::array);
  EXPECT_EQ(s.m[0].size, 5U);
  EXPECT_EQ(s.m[1].kind, Kind::array);
  EXPECT_EQ(s.m[1].size, 0U);
  EXPECT_EQ(s.m[2].kind, Kind::object);
  EXPECT_EQ(s.m[3].size, 1U);
}

TEST(ScanMembers, NumbersAsADocumentGivesThemAsDouble) {
  const auto s = scan(R"({"a":-7,"b":18446744073709551615,"c":2.5e3,"d":1e300})");
  ASSERT_TRUE(s.ok);
  for (const auto& m : s.m) {
    EXPECT_EQ(m.kind, Kind::number);
  }
  EXPECT_EQ(s.m[0].number, -7.0);
  EXPECT_EQ(s.m[1].number, 18446744073709551615.0);
  EXPECT_EQ(s.m[2].number, 2500.0);
  EXPECT_EQ(s.m[3].number, 1e300);
}

TEST(ScanMembers, KeysAreComparedDecoded) {
  const auto s = scan(R"({"\u0061":1})");
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.m[0].kind, Kind::number);
}

TEST(ScanMembers, AWantedKeyTwiceIsRefused) {
  EXPECT_FALSE(scan(R"({"a":1,"a":2})").ok);
  EXPECT_FALSE(scan(R"({"a":1,"\u0061":2})").ok);
  EXPECT_TRUE(scan(R"({"x":1,"x":2,"y":{"a":1,"a":2}})").ok) << "other keys may repeat";
}

TEST(ScanMembers, RefusesWhatIsNotOneJsonObject) {
  for (const std::string_view text :
       {"", " ", "[]", "[{\"a\":1}]", "1", "\"a\"", "null", "true", "{", "{\"a\":1,}", "{\"a\":1}}",
        "{\"a\":1} x", "{\"a\" 1}", "{\"a\":1 /* c */}", "{\"a\":\"\xff\"}", "{\"a\":1e400}",
        "{\"a\":\"\\ud83d\"}"}) {
    EXPECT_FALSE(scan(text).ok) << text;
  }
  EXPECT_TRUE(scan(" {} ").ok);
  EXPECT_TRUE(scan("\xEF\xBB\xBF{\"a\":1}").ok)
      << "a UTF-8 byte order mark is skipped, as parse does";
}

TEST(ScanMembers, ClearsWhatAnEarlierScanLeft) {
  Scan s;
  ASSERT_TRUE(scan_members(R"({"a":[1,2]})", kKeys, s.m));
  ASSERT_TRUE(scan_members(R"({"b":1})", kKeys, s.m));
  EXPECT_EQ(s.m[0].kind, Kind::absent);
  EXPECT_EQ(s.m[0].size, 0U);
}

}  // namespace
}  // namespace kvbench::backend
