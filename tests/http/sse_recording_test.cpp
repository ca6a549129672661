// SseFramer on recorded llama-server streams, cut at every offset and at seeded random offsets,
// in "\n", "\r\n" and "\r" variants.

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/http/sse.h"
#include "tests/http/chunking.h"
#include "tests/http/printers.h"

namespace kvbench::http {
namespace {

using test_support::chunk_index;
using test_support::cut;
using test_support::LineEnding;
using test_support::map_offset;
using test_support::read_recording;
using test_support::RecordingCase;
using test_support::with_line_ending;

std::vector<SseEvent> frame_whole(std::string_view text) {
  return test_support::frame<SseFramer, SseEvent>({text});
}

// Offsets (in a "\n" stream) of the byte that completes each event: the '\n' of the blank line
// closing a block that holds a data or error line. Written independently of the framer.
std::vector<std::size_t> event_end_offsets(std::string_view text) {
  std::vector<std::size_t> ends;
  std::size_t block_start = 0;
  for (std::size_t blank = text.find("\n\n"); blank != std::string_view::npos;
       blank = text.find("\n\n", block_start)) {
    const std::string_view block = text.substr(block_start, blank - block_start);
    const bool has_data = block.starts_with("data") || block.starts_with("error") ||
                          block.find("\ndata") != std::string_view::npos ||
                          block.find("\nerror") != std::string_view::npos;
    if (has_data) {
      ends.push_back(blank + 1);
    }
    block_start = blank + 2;
  }
  return ends;
}

class SseRecording : public ::testing::TestWithParam<RecordingCase> {
 protected:
  void SetUp() override {
    lf_text_ = read_recording(GetParam().file);
    text_ = with_line_ending(lf_text_, GetParam().ending);
    reference_ = frame_whole(lf_text_);
    ends_ = event_end_offsets(lf_text_);
  }

  // The reference events with the arrival a stream cut at `cuts` must give each of them.
  std::vector<SseEvent> expected_for(const std::vector<std::size_t>& cuts) const {
    std::vector<SseEvent> expected = reference_;
    for (std::size_t k = 0; k < expected.size(); ++k) {
      expected[k].arrival =
          Nanos{chunk_index(cuts, map_offset(lf_text_, ends_[k], GetParam().ending))};
    }
    return expected;
  }

  std::string lf_text_;
  std::string text_;
  std::vector<SseEvent> reference_;
  std::vector<std::size_t> ends_;
};

TEST_P(SseRecording, WholeStreamGivesOneEventPerDataBlock) {
  ASSERT_FALSE(reference_.empty());
  EXPECT_EQ(reference_.size(), ends_.size());
  EXPECT_EQ(frame_whole(text_), reference_);
}

TEST_P(SseRecording, EverySingleCutGivesTheSameEventsAndArrivals) {
  for (std::size_t at = 0; at <= text_.size(); ++at) {
    const std::vector<std::size_t> cuts{at};
    ASSERT_EQ((test_support::frame<SseFramer, SseEvent>(cut(text_, cuts))), expected_for(cuts))
        << "cut at " << at;
  }
}

TEST_P(SseRecording, EveryByteInItsOwnChunk) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = 1; at < text_.size(); ++at) {
    cuts.push_back(at);
  }
  EXPECT_EQ((test_support::frame<SseFramer, SseEvent>(cut(text_, cuts))), expected_for(cuts));
}

TEST_P(SseRecording, RandomCutsGiveTheSameEventsAndArrivals) {
  std::mt19937 rng(20260830);
  for (int round = 0; round < 300; ++round) {
    const std::vector<std::size_t> cuts = test_support::random_cuts(text_.size(), rng);
    ASSERT_EQ((test_support::frame<SseFramer, SseEvent>(cut(text_, cuts))), expected_for(cuts))
        << "round " << round;
  }
}

std::vector<RecordingCase> all_cases() {
  std::vector<RecordingCase> cases;
  for (const char* file : {"llama_completion.sse", "llama_completion_pings.sse", "llama_chat.sse",
                           "llama_error_old.sse", "llama_error_new.sse"}) {
    for (const LineEnding ending : {LineEnding::lf, LineEnding::crlf, LineEnding::cr}) {
      cases.push_back({file, ending});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Recordings, SseRecording, ::testing::ValuesIn(all_cases()));

nlohmann::json data_of(const SseEvent& event) {
  return nlohmann::json::parse(event.data);
}

TEST(SseRecordingContent, CompletionStreamEndsWithStopAndTimings) {
  const auto events = frame_whole(read_recording("llama_completion.sse"));
  ASSERT_EQ(events.size(), 9U);
  std::string text;
  for (std::size_t i = 0; i < 8; ++i) {
    const auto data = data_of(events[i]);
    EXPECT_EQ(events[i].event, "message");
    EXPECT_FALSE(data.at("stop").get<bool>());
    EXPECT_EQ(data.at("tokens_predicted").get<int>(), static_cast<int>(i) + 1);
    text += data.at("content").get<std::string>();
  }
  EXPECT_EQ(text, " the lazy dog sleeps under the old tree");
  const auto last = data_of(events[8]);
  EXPECT_TRUE(last.at("stop").get<bool>());
  EXPECT_EQ(last.at("stop_type"), "limit");
  const auto& timings = last.at("timings");
  EXPECT_EQ(timings.at("cache_n").get<int>(), 0);
  EXPECT_EQ(timings.at("prompt_n").get<int>(), 12);
  EXPECT_DOUBLE_EQ(timings.at("prompt_ms").get<double>(), 30.112);
  EXPECT_EQ(timings.at("predicted_n").get<int>(), 8);
  EXPECT_DOUBLE_EQ(timings.at("predicted_ms").get<double>(), 61.875);
}

TEST(SseRecordingContent, PingsAreCountedAndLeaveTheEventsAlone) {
  SseFramer framer;
  std::vector<SseEvent> with_pings;
  framer.feed(read_recording("llama_completion_pings.sse"), Nanos{0}, with_pings);
  framer.finish(with_pings);
  EXPECT_EQ(framer.comment_count(), 3U);
  EXPECT_EQ(with_pings, frame_whole(read_recording("llama_completion.sse")));
}

TEST(SseRecordingContent, ChatStreamEndsWithUsageThenDone) {
  const auto events = frame_whole(read_recording("llama_chat.sse"));
  ASSERT_EQ(events.size(), 9U);
  EXPECT_EQ(events[8].data, "[DONE]");
  const auto usage = data_of(events[7]);
  EXPECT_TRUE(usage.at("choices").empty());
  EXPECT_EQ(usage.at("usage").at("prompt_tokens").get<int>(), 12);
  EXPECT_EQ(usage.at("timings").at("cache_n").get<int>(), 11);
  EXPECT_EQ(data_of(events[6]).at("choices").at(0).at("finish_reason"), "length");
}

TEST(SseRecordingContent, OlderBuildErrorLineIsAnErrorEvent) {
  const auto events = frame_whole(read_recording("llama_error_old.sse"));
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[1].event, "message");
  EXPECT_EQ(events[2].event, "error");
  EXPECT_EQ(data_of(events[2]).at("code").get<int>(), 500);
}

TEST(SseRecordingContent, NewerBuildErrorIsADataEvent) {
  const auto events = frame_whole(read_recording("llama_error_new.sse"));
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[2].event, "message");
  EXPECT_EQ(data_of(events[2]).at("error").at("type"), "server_error");
}

}  // namespace
}  // namespace kvbench::http
