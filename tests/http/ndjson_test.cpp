// NdjsonFramer on hand-written lines and on recorded Ollama streams cut at every offset.

#include "harness/http/ndjson.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

std::vector<NdjsonLine> frame_lines(const std::vector<std::string_view>& chunks) {
  return test_support::frame<NdjsonFramer, NdjsonLine>(chunks);
}

NdjsonLine line(std::string text, long arrival) {
  return NdjsonLine{std::move(text), Nanos{arrival}};
}

TEST(NdjsonFramer, SplitsOnNewlineWithArrivalOfTheNewline) {
  EXPECT_EQ(frame_lines({"{\"a\":1}\n{\"b\"", ":2}", "\n"}),
            (std::vector<NdjsonLine>{line("{\"a\":1}", 0), line("{\"b\":2}", 2)}));
}

TEST(NdjsonFramer, CrLfIsToleratedEvenWhenSplit) {
  EXPECT_EQ(frame_lines({"{\"a\":1}\r\n{\"b\":2}\r", "\n"}),
            (std::vector<NdjsonLine>{line("{\"a\":1}", 0), line("{\"b\":2}", 1)}));
}

TEST(NdjsonFramer, CrInsideALineIsKept) {
  EXPECT_EQ(frame_lines({"a\rb\n"}), (std::vector<NdjsonLine>{line("a\rb", 0)}));
}

TEST(NdjsonFramer, BlankLinesAreSkippedAndCounted) {
  NdjsonFramer framer;
  std::vector<NdjsonLine> out;
  framer.feed("\n{}\n\r\n \t\n\n[]\n", Nanos{4}, out);
  framer.finish(out);
  EXPECT_EQ(out, (std::vector<NdjsonLine>{line("{}", 4), line("[]", 4)}));
  EXPECT_EQ(framer.blank_line_count(), 4U);
  framer.reset();
  EXPECT_EQ(framer.blank_line_count(), 0U);
}

TEST(NdjsonFramer, FinishFlushesALastLineWithoutNewline) {
  EXPECT_EQ(frame_lines({"{}\n{\"done\"", ":true}", ""}),
            (std::vector<NdjsonLine>{line("{}", 0), line("{\"done\":true}", 1)}));
  EXPECT_EQ(frame_lines({"{}\r"}), (std::vector<NdjsonLine>{line("{}", 0)}));
}

TEST(NdjsonFramer, FinishWithNothingOrBlankPendingYieldsNothing) {
  EXPECT_TRUE(frame_lines({""}).empty());
  EXPECT_TRUE(frame_lines({"  "}).empty());
  EXPECT_EQ(frame_lines({"{}\n"}).size(), 1U);
}

TEST(NdjsonFramer, IsReadyForANewStreamAfterFinish) {
  NdjsonFramer framer;
  std::vector<NdjsonLine> out;
  framer.feed("{\"a\"", Nanos{1}, out);
  framer.finish(out);
  framer.feed("{\"b\"}\n", Nanos{2}, out);
  EXPECT_EQ(out, (std::vector<NdjsonLine>{line("{\"a\"", 1), line("{\"b\"}", 2)}));
}

class NdjsonRecording : public ::testing::TestWithParam<RecordingCase> {
 protected:
  void SetUp() override {
    lf_text_ = read_recording(GetParam().file);
    text_ = with_line_ending(lf_text_, GetParam().ending);
    for (std::size_t at = lf_text_.find('\n'); at != std::string::npos;
         at = lf_text_.find('\n', at + 1)) {
      // The '\n' itself completes the line; in a "\r\n" stream it follows the '\r'.
      newline_offsets_.push_back(map_offset(lf_text_, at, GetParam().ending) +
                                 (GetParam().ending == LineEnding::crlf ? 1 : 0));
    }
    reference_ = frame_lines({lf_text_});
  }

  std::vector<NdjsonLine> expected_for(const std::vector<std::size_t>& cuts) const {
    std::vector<NdjsonLine> expected = reference_;
    for (std::size_t k = 0; k < expected.size(); ++k) {
      expected[k].arrival = Nanos{chunk_index(cuts, newline_offsets_[k])};
    }
    return expected;
  }

  std::string lf_text_;
  std::string text_;
  std::vector<std::size_t> newline_offsets_;
  std::vector<NdjsonLine> reference_;
};

TEST_P(NdjsonRecording, OneLinePerNewlineEachAJsonObject) {
  ASSERT_EQ(reference_.size(), newline_offsets_.size());
  for (const auto& l : reference_) {
    EXPECT_TRUE(nlohmann::json::parse(l.text).is_object()) << l.text;
  }
  EXPECT_EQ(frame_lines({text_}), reference_);
}

TEST_P(NdjsonRecording, EverySingleCutGivesTheSameLinesAndArrivals) {
  for (std::size_t at = 0; at <= text_.size(); ++at) {
    const std::vector<std::size_t> cuts{at};
    ASSERT_EQ(frame_lines(cut(text_, cuts)), expected_for(cuts)) << "cut at " << at;
  }
}

TEST_P(NdjsonRecording, RandomCutsGiveTheSameLinesAndArrivals) {
  std::mt19937 rng(8675309);
  for (int round = 0; round < 300; ++round) {
    const std::vector<std::size_t> cuts = test_support::random_cuts(text_.size(), rng);
    ASSERT_EQ(frame_lines(cut(text_, cuts)), expected_for(cuts)) << "round " << round;
  }
}

std::vector<RecordingCase> all_ndjson_cases() {
  std::vector<RecordingCase> cases;
  for (const char* file :
       {"ollama_generate.ndjson", "ollama_generate_error.ndjson", "ollama_chat.ndjson"}) {
    for (const LineEnding ending : {LineEnding::lf, LineEnding::crlf}) {
      cases.push_back({file, ending});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Recordings, NdjsonRecording, ::testing::ValuesIn(all_ndjson_cases()));

TEST(NdjsonRecordingContent, GenerateStreamEndsWithDoneAndMetrics) {
  const auto lines = frame_lines({read_recording("ollama_generate.ndjson")});
  ASSERT_EQ(lines.size(), 9U);
  std::string text;
  for (std::size_t i = 0; i < 8; ++i) {
    const auto doc = nlohmann::json::parse(lines[i].text);
    EXPECT_FALSE(doc.at("done").get<bool>());
    text += doc.at("response").get<std::string>();
  }
  EXPECT_EQ(text, " the lazy dog sleeps under the old tree");
  const auto last = nlohmann::json::parse(lines[8].text);
  EXPECT_TRUE(last.at("done").get<bool>());
  EXPECT_EQ(last.at("eval_count").get<int>(), 8);
  EXPECT_EQ(last.at("eval_duration").get<long>(), 61875000L);
}

TEST(NdjsonRecordingContent, MidStreamErrorIsItsOwnLine) {
  const auto lines = frame_lines({read_recording("ollama_generate_error.ndjson")});
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_FALSE(nlohmann::json::parse(lines[2].text).at("done").get<bool>());
  const auto error = nlohmann::json::parse(lines[3].text);
  EXPECT_EQ(error.size(), 1U);
  EXPECT_EQ(error.at("error").get<std::string>().rfind("an error was encountered", 0), 0U);
}

}  // namespace
}  // namespace kvbench::http
