// URLs with credentials are found wherever the user part sits; a URL is shown without them.

#include "harness/core/url.h"

#include <gtest/gtest.h>

namespace kvbench {
namespace {

TEST(Url, CredentialsAreFoundInTheAuthorityOnly) {
  EXPECT_TRUE(url_has_credentials("http://user:pw@127.0.0.1:8000/v1"));
  EXPECT_TRUE(url_has_credentials("https://token@api.example.com/v1"));
  EXPECT_TRUE(url_has_credentials("user:pw@host:8000/v1"));
  EXPECT_FALSE(url_has_credentials("http://127.0.0.1:8000/v1"));
  EXPECT_FALSE(url_has_credentials("https://api.example.com/v1/models/a@b"));
  EXPECT_FALSE(url_has_credentials("http://h/v1?mail=a@b"));
  EXPECT_FALSE(url_has_credentials(""));
}

TEST(Url, DisplayHidesTheUserPartAndTheQuery) {
  EXPECT_EQ(url_for_display("http://user:pw@127.0.0.1:8000/v1"), "http://***@127.0.0.1:8000/v1");
  EXPECT_EQ(url_for_display("https://h/v1?key=sk-123&x=1#top"), "https://h/v1?***#top");
  EXPECT_EQ(url_for_display("https://a:b@h?key=1"), "https://***@h?***");
  EXPECT_EQ(url_for_display("ftp://u:p@h/x"), "ftp://***@h/x");
  EXPECT_EQ(url_for_display("u:p@h/x"), "***@h/x");
  EXPECT_EQ(url_for_display("http://127.0.0.1:8000/v1"), "http://127.0.0.1:8000/v1");
}

}  // namespace
}  // namespace kvbench
