// Outcome names and error-body messages: the pure parts of the transport seam.

#include "harness/http/transport.h"

#include <string>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "tests/http/printers.h"

namespace kvbench::http {
namespace {

TEST(Outcome, NamesRoundTrip) {
  for (const Outcome o : {Outcome::ok, Outcome::connect_error, Outcome::timeout,
                          Outcome::http_error, Outcome::stream_error, Outcome::aborted}) {
    EXPECT_EQ(outcome_from_string(to_string(o)), o);
  }
  EXPECT_EQ(to_string(Outcome::connect_error), "connect_error");
  EXPECT_EQ(to_string(Outcome::stream_error), "stream_error");
}

TEST(Outcome, UnknownNameIsAnInputErrorListingTheNames) {
  try {
    outcome_from_string("timed_out");
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown call outcome 'timed_out' (expected one of ok, connect_error, timeout, "
                 "http_error, stream_error, aborted)");
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(ErrorMessageFromBody, LlamaServerErrorObject) {
  EXPECT_EQ(
      error_message_from_body(
          503, R"({"error":{"code":503,"message":"Loading model","type":"unavailable_error"}})"),
      "Loading model");
}

TEST(ErrorMessageFromBody, OllamaErrorString) {
  EXPECT_EQ(error_message_from_body(404, "{\"error\":\"model 'x' not found\"}\n"),
            "model 'x' not found");
}

TEST(ErrorMessageFromBody, TopLevelMessage) {
  EXPECT_EQ(error_message_from_body(400, R"({"message":"bad field","code":400})"), "bad field");
}

TEST(ErrorMessageFromBody, PlainTextIsValidUtf8) {
  // Found by fuzzing: a binary body, or one cut at 512 bytes inside a character, gave a message
  // that could not be written into calls.jsonl.
  EXPECT_EQ(error_message_from_body(502, "bad \xff gateway"), "bad \xEF\xBF\xBD gateway");
  const std::string long_body = std::string(511, 'x') + "\xC3\xA9";
  EXPECT_EQ(error_message_from_body(500, long_body), std::string(511, 'x') + "\xEF\xBF\xBD");
}

TEST(ErrorMessageFromBody, JsonWithoutAMessageIsKeptAsText) {
  EXPECT_EQ(error_message_from_body(500, R"( {"error":{"code":500}} )"),
            R"({"error":{"code":500}})");
}

TEST(ErrorMessageFromBody, PlainTextIsTrimmed) {
  EXPECT_EQ(error_message_from_body(404, "\r\n  Not Found \n"), "Not Found");
}

TEST(ErrorMessageFromBody, LongTextIsCutAt512Bytes) {
  EXPECT_EQ(error_message_from_body(500, std::string(600, 'x')), std::string(512, 'x'));
}

TEST(ErrorMessageFromBody, EmptyBodyGivesTheStatus) {
  EXPECT_EQ(error_message_from_body(502, ""), "HTTP 502");
  EXPECT_EQ(error_message_from_body(500, " \n"), "HTTP 500");
}

}  // namespace
}  // namespace kvbench::http
