// SseFramer on hand-written streams: fields, line endings, chunk boundaries, arrival times.

#include "harness/http/sse.h"

#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/chunking.h"
#include "tests/http/printers.h"

namespace kvbench::http {

namespace {

using test_support::frame;

std::vector<SseEvent> frame_chunks(const std::vector<std::string_view>& chunks) {
  return frame<SseFramer, SseEvent>(chunks);
}

std::vector<SseEvent> frame_bytes(std::string_view text) {
  std::vector<std::string_view> chunks;
  for (std::size_t i = 0; i < text.size(); ++i) {
    chunks.push_back(text.substr(i, 1));
  }
  return frame_chunks(chunks);
}

SseEvent ev(std::string name, std::string data, long arrival) {
  return SseEvent{std::move(name), std::move(data), Nanos{arrival}};
}

TEST(SseFramer, DataValueLosesOneLeadingSpaceAtMost) {
  const auto events = frame_chunks({"data: a\n\ndata:b\n\ndata:  c\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "a", 0), ev("message", "b", 0),
                                           ev("message", " c", 0)}));
}

TEST(SseFramer, MultiLineDataIsJoinedWithNewline) {
  const auto events = frame_chunks({"data: {\"a\":\ndata: 1}\ndata\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "{\"a\":\n1}\n", 0)}));
}

TEST(SseFramer, EventFieldNamesOnlyItsOwnEvent) {
  const auto events = frame_chunks({"event: token\ndata: x\n\ndata: y\n\nevent:\ndata: z\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("token", "x", 0), ev("message", "y", 0),
                                           ev("message", "z", 0)}));
}

TEST(SseFramer, CommentLinesAreCountedAndIgnored) {
  SseFramer framer;
  std::vector<SseEvent> out;
  framer.feed(": ping\n\n:\ndata: a\n: inside an event\n\n", Nanos{3}, out);
  EXPECT_EQ(out, (std::vector<SseEvent>{ev("message", "a", 3)}));
  EXPECT_EQ(framer.comment_count(), 3U);
  framer.reset();
  EXPECT_EQ(framer.comment_count(), 0U);
}

TEST(SseFramer, ErrorLineYieldsAnErrorEvent) {
  const auto events =
      frame_chunks({"data: 1\n\nerror: {\"code\":500,\"message\":\"boom\"}\n\ndata: 2\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "1", 0),
                                           ev("error", "{\"code\":500,\"message\":\"boom\"}", 0),
                                           ev("message", "2", 0)}));
}

TEST(SseFramer, ErrorEventFieldYieldsAnErrorEvent) {
  const auto events = frame_chunks({"event: error\ndata: {\"message\":\"boom\"}\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("error", "{\"message\":\"boom\"}", 0)}));
}

TEST(SseFramer, DoneIsPassedThroughAsData) {
  const auto events = frame_chunks({"data: {}\n\ndata: [DONE]\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "{}", 0), ev("message", "[DONE]", 0)}));
}

TEST(SseFramer, EventWithoutDataIsDroppedAndItsNameForgotten) {
  const auto events = frame_chunks({"event: lonely\nid: 7\n\ndata: a\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "a", 0)}));
}

TEST(SseFramer, IdRetryAndUnknownFieldsAreIgnored) {
  const auto events = frame_chunks({"id: 1\nretry: 10\nfoo: bar\nplain\ndata: a\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "a", 0)}));
}

TEST(SseFramer, EmptyDataLineMakesAnEventWithEmptyData) {
  const auto events = frame_chunks({"data:\n\ndata\n\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "", 0), ev("message", "", 0)}));
}

TEST(SseFramer, FinishFlushesAnEventWithoutBlankLine) {
  EXPECT_EQ(frame_chunks({"data: a\n\ndata: b", "c"}),
            (std::vector<SseEvent>{ev("message", "a", 0), ev("message", "bc", 1)}));
  EXPECT_EQ(frame_chunks({"event: done\n", "data: x\n", ""}),
            (std::vector<SseEvent>{ev("done", "x", 1)}));
  EXPECT_EQ(frame_chunks({"data: x\r"}), (std::vector<SseEvent>{ev("message", "x", 0)}));
}

TEST(SseFramer, FinishWithNothingPendingYieldsNothing) {
  EXPECT_EQ(frame_chunks({"data: a\n\n"}).size(), 1U);
  EXPECT_TRUE(frame_chunks({""}).empty());
  EXPECT_TRUE(frame_chunks({"event: x\n: ping"}).empty());
}

TEST(SseFramer, IsReadyForANewStreamAfterFinish) {
  SseFramer framer;
  std::vector<SseEvent> out;
  framer.feed("event: e\ndata: a", Nanos{1}, out);
  framer.finish(out);
  framer.feed("data: b\n\n", Nanos{2}, out);
  framer.finish(out);
  EXPECT_EQ(out, (std::vector<SseEvent>{ev("e", "a", 1), ev("message", "b", 2)}));
}

TEST(SseFramer, ArrivalIsThatOfTheByteEndingTheBlankLine) {
  // Offsets: "data: a\n" is 0..7, the blank line's '\n' is 8; "data: b\r\n" is 9..17 and the
  // blank line's '\r' is 18, which already ends the line.
  const auto events = frame_bytes("data: a\n\ndata: b\r\n\r\n");
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "a", 8), ev("message", "b", 18)}));
}

TEST(SseFramer, CrLfSplitBetweenCrAndLfIsOneLineEnding) {
  const auto events = frame_chunks({"data: a\r", "\ndata: b\r", "\n\r", "\n"});
  EXPECT_EQ(events, (std::vector<SseEvent>{ev("message", "a\nb", 2)}));
}

TEST(SseFramer, LoneCrEndsALine) {
  EXPECT_EQ(frame_chunks({"data: a\rdata: b\r\r"}),
            (std::vector<SseEvent>{ev("message", "a\nb", 0)}));
  EXPECT_EQ(frame_chunks({"data: a\r", "\r\n"}), (std::vector<SseEvent>{ev("message", "a", 1)}));
}

TEST(SseFramer, MixedLineEndingsInOneStream) {
  EXPECT_EQ(frame_chunks({"data: a\r\ndata: b\ndata: c\r\r\ndata: d\n\n"}),
            (std::vector<SseEvent>{ev("message", "a\nb\nc", 0), ev("message", "d", 0)}));
}

TEST(SseFramer, FieldNameSplitAcrossChunks) {
  EXPECT_EQ(frame_chunks({"da", "ta", ":", " x", "\n", "\n"}),
            (std::vector<SseEvent>{ev("message", "x", 5)}));
  EXPECT_EQ(frame_chunks({"err", "or: {}\n\n"}), (std::vector<SseEvent>{ev("error", "{}", 1)}));
}

TEST(SseFramer, EmptyChunksChangeNothing) {
  EXPECT_EQ(frame_chunks({"data: a\r", "", "\n", "", "\n"}),
            (std::vector<SseEvent>{ev("message", "a", 4)}));
}

}  // namespace
}  // namespace kvbench::http
