// answers.jsonl typed: every recorded line reads and writes back byte for byte, each answer's
// form (ids with top-k, text, error) is kept apart, and a malformed line is skipped with a
// warning naming it.

#include "harness/results/answer_record.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/results/results.h"

namespace kvbench::results {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kAnswersRun = fs::path(KVBENCH_TEST_DATA) / "runs" / "answers-tiny";

TEST(AnswerRecord, EveryRecordedLineWritesBackByteForByte) {
  std::ifstream in(kAnswersRun / "answers.jsonl");
  std::string line;
  int lines = 0;
  int controls = 0;
  while (std::getline(in, line)) {
    const auto a = json::parse(line).get<AnswerRecord>();
    EXPECT_EQ(json(a).dump(), line);
    EXPECT_TRUE(a.ok());
    EXPECT_EQ(a.top.size(), a.ids.size());
    controls += a.start == 2 ? 1 : 0;
    ++lines;
  }
  EXPECT_GE(lines, 6);
  EXPECT_GE(controls, 1);
  EXPECT_EQ(load_run(kAnswersRun).answers.size(), static_cast<std::size_t>(lines));
}

TEST(AnswerRecord, TextAndErrorAnswersKeepTheirForm) {
  AnswerRecord a;
  a.cache_type = "q8_0";
  a.num_ctx = 2048;
  a.text = "the cat";
  json j = a;
  EXPECT_EQ(j["text"], "the cat");
  EXPECT_FALSE(j.contains("ids"));
  a.error = "timeout";
  j = a;
  EXPECT_EQ(j["error"], "timeout");
  EXPECT_FALSE(j.contains("text"));
  EXPECT_FALSE(j.get<AnswerRecord>().ok());
}

TEST(AnswerRecord, AMalformedLineIsSkippedWithAWarning) {
  const fs::path dir = fs::path(::testing::TempDir()) / "answer-record-malformed";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(kAnswersRun / "run.json", dir / "run.json");
  fs::copy(kAnswersRun / "calls.jsonl", dir / "calls.jsonl");
  std::ifstream in(kAnswersRun / "answers.jsonl");
  std::string first;
  std::getline(in, first);
  std::ofstream(dir / "answers.jsonl") << first << "\n"
                                       << R"({"block": 0, "ids": [1]})"
                                       << "\n"
                                       << R"({"block": 0, "prompt": 1, "ids": ["x"]})"
                                       << "\n";
  const auto loaded = load_run(dir);
  EXPECT_EQ(loaded.answers.size(), 1U);
  int warned = 0;
  for (const auto& w : loaded.warnings) {
    warned += w.starts_with("answers.jsonl line ") ? 1 : 0;
  }
  EXPECT_EQ(warned, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kvbench::results
