// `kvbench trace analyze` on the Mooncake conversation trace and on small traces written here:
// the hit rates under their three definitions, the block LRU's at each capacity, the working set,
// --block-tokens, and bad input exiting 2 with the file's line or the flag named.

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/cli/trace_cmd.h"
#include "harness/core/error.h"

namespace kvbench::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kConversation =
    std::string(KVBENCH_TEST_DATA) + "/traces/mooncake-conversation.jsonl.xz";

// A rate as the report prints it: a percentage to one decimal.
double tenths(const nlohmann::json& rate) {
  return std::round(rate.get<double>() * 1000) / 10;
}

std::string slurp_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TraceAnalyze : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() /
                  fmt::format("kvbench-trace-analyze-{}-{}", ::getpid(),
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  int kvbench(const std::string& args) {
    const std::string cmd = std::string(KVBENCH_BINARY) + " " + args + " >" +
                            (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    out_ = slurp_file(dir_ / "out");
    err_ = slurp_file(dir_ / "err");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string out_;
  std::string err_;
};

TEST_F(TraceAnalyze, ConversationTraceJson) {
  ASSERT_EQ(kvbench("trace analyze " + kConversation +
                    " --capacity-blocks 100000,10000,2000 --format json"),
            0)
      << err_;
  const auto j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["schema"], "kvbench.trace-analysis");
  EXPECT_EQ(j["requests"], 12031);
  EXPECT_EQ(j["block_tokens"], 512);
  EXPECT_GT(j["blocks"].get<long long>(), j["unique_blocks"].get<long long>());
  const auto& infinite = j["hit_rate"]["infinite"];
  EXPECT_DOUBLE_EQ(tenths(infinite["blocks"]), 36.6);
  EXPECT_DOUBLE_EQ(tenths(infinite["tokens"]), 37.4);
  EXPECT_DOUBLE_EQ(tenths(infinite["per_request_mean"]), 38.4);
  const auto& lru = j["hit_rate"]["lru"];
  ASSERT_EQ(lru.size(), 3U);
  EXPECT_EQ(lru[0]["capacity_blocks"], 100000);
  for (const char* rate : {"tokens", "blocks", "per_request_mean"}) {
    // No cache beats an infinite one, and a smaller one reuses less.
    EXPECT_LE(lru[0][rate].get<double>(), infinite[rate].get<double>()) << rate;
    EXPECT_GT(lru[0][rate].get<double>(), lru[1][rate].get<double>()) << rate;
    EXPECT_GT(lru[1][rate].get<double>(), lru[2][rate].get<double>()) << rate;
  }
  const auto& ws = j["working_set"];
  ASSERT_EQ(ws.size(), 10U);
  EXPECT_EQ(ws.back()["requests"], 12031);
  EXPECT_EQ(ws.back()["unique_blocks"], j["unique_blocks"]);
  EXPECT_DOUBLE_EQ(ws.back()["at_ms"].get<double>(), j["span_ms"].get<double>());
  for (std::size_t i = 1; i < ws.size(); ++i) {
    EXPECT_LE(ws[i - 1]["unique_blocks"].get<long long>(), ws[i]["unique_blocks"].get<long long>());
  }
  EXPECT_DOUBLE_EQ(ws.back()["of_capacity"][2]["multiple"].get<double>(),
                   j["unique_blocks"].get<double>() / 2000);
}

TEST_F(TraceAnalyze, AnLruHoldingEveryBlockIsTheInfiniteCache) {
  TraceAnalyzeOptions o;
  o.file = kConversation;
  const auto unique = analyze_trace(o)["unique_blocks"].get<std::size_t>();
  o.capacity_blocks = {unique};
  const auto j = analyze_trace(o);
  EXPECT_EQ(j["hit_rate"]["lru"][0]["blocks"], j["hit_rate"]["infinite"]["blocks"]);
  EXPECT_EQ(j["hit_rate"]["lru"][0]["tokens"], j["hit_rate"]["infinite"]["tokens"]);
}

TEST_F(TraceAnalyze, MarkdownPutsEachDefinitionBesideItsNumber) {
  ASSERT_EQ(kvbench("trace analyze " + kConversation + " --capacity-blocks 2000"), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("12,031 requests"));
  std::istringstream lines(out_);
  std::string line;
  int found = 0;
  while (std::getline(lines, line)) {
    if (line.find("36.6 %") != std::string::npos) {
      EXPECT_THAT(line, HasSubstr("reused blocks / blocks sent"));
      ++found;
    }
    if (line.find("37.4 %") != std::string::npos) {
      EXPECT_THAT(line, HasSubstr("reused tokens / input tokens"));
      ++found;
    }
    if (line.find("38.4 %") != std::string::npos) {
      EXPECT_THAT(line, HasSubstr("mean over requests of reused blocks / the request's blocks"));
      ++found;
    }
  }
  EXPECT_EQ(found, 3);
  EXPECT_THAT(out_, HasSubstr("## Working set over time"));
  EXPECT_THAT(out_, HasSubstr("/ 2,000 blocks"));
}

// Two requests cut at 16-token blocks: A [1 2] of 32 tokens, B [1 2 3] of 40.
const char* kSixteenTokenBlocks =
    "{\"timestamp\": 0, \"input_length\": 32, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
    "{\"timestamp\": 5, \"input_length\": 40, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n";

TEST_F(TraceAnalyze, BlockTokensSetsTheBlockCountCheckAndTheTokensABlockHolds) {
  const auto file = write("t.jsonl", kSixteenTokenBlocks);
  TraceAnalyzeOptions o;
  o.file = file.string();
  EXPECT_THROW(analyze_trace(o), InputError);  // 512-token blocks: 1 id each, not 2 and 3
  o.block_tokens = 16;
  o.capacity_blocks = {1};
  const auto j = analyze_trace(o);
  EXPECT_EQ(j["block_tokens"], 16);
  EXPECT_EQ(j["blocks"], 5);
  EXPECT_EQ(j["unique_blocks"], 3);
  // B reuses A's two blocks: 32 of the 72 tokens, 2 of 5 blocks, a mean of (0 + 2/3) / 2.
  EXPECT_DOUBLE_EQ(j["hit_rate"]["infinite"]["tokens"].get<double>(), 32.0 / 72.0);
  EXPECT_DOUBLE_EQ(j["hit_rate"]["infinite"]["blocks"].get<double>(), 2.0 / 5.0);
  EXPECT_DOUBLE_EQ(j["hit_rate"]["infinite"]["per_request_mean"].get<double>(), 1.0 / 3.0);
  // An LRU of one block keeps A's first block only (touched last): B reuses 16 tokens.
  EXPECT_DOUBLE_EQ(j["hit_rate"]["lru"][0]["tokens"].get<double>(), 16.0 / 72.0);
  EXPECT_DOUBLE_EQ(j["hit_rate"]["lru"][0]["blocks"].get<double>(), 1.0 / 5.0);
  // Ten points over the 5 ms between the arrivals: A alone until the last.
  ASSERT_EQ(j["working_set"].size(), 10U);
  EXPECT_EQ(j["working_set"][0]["unique_blocks"], 2);
  EXPECT_EQ(j["working_set"][8]["requests"], 1);
  EXPECT_EQ(j["working_set"][9]["unique_blocks"], 3);
}

TEST_F(TraceAnalyze, AWrongBlockCountExitsTwoNamingTheLine) {
  const auto file = write("bad.jsonl", kSixteenTokenBlocks);
  EXPECT_EQ(kvbench("trace analyze " + file.string()), 2);
  EXPECT_THAT(err_, HasSubstr(file.string()));
  EXPECT_THAT(err_, HasSubstr("line 1"));
  EXPECT_THAT(err_, HasSubstr("hash_ids"));
  EXPECT_TRUE(out_.empty());
}

TEST_F(TraceAnalyze, BadFlagsExitTwo) {
  EXPECT_EQ(kvbench("trace analyze " + kConversation + " --trace-format sharegpt"), 2);
  EXPECT_THAT(err_, HasSubstr("--trace-format"));
  EXPECT_THAT(err_, HasSubstr("sharegpt"));
  EXPECT_EQ(kvbench("trace analyze " + kConversation + " --capacity-blocks 0"), 2);
  EXPECT_THAT(err_, HasSubstr("--capacity-blocks"));
  EXPECT_EQ(kvbench("trace analyze " + kConversation + " --format tsv"), 2);
  EXPECT_EQ(kvbench("trace analyze " + std::string(KVBENCH_TEST_DATA) +
                    "/traces/weka-fixture.json --trace-format weka --block-tokens 16"),
            2);
  EXPECT_THAT(err_, HasSubstr("block_size"));
  EXPECT_EQ(kvbench("trace analyze " + (dir_ / "missing.jsonl").string()), 2);
  EXPECT_THAT(err_, HasSubstr("missing.jsonl"));
}

TEST_F(TraceAnalyze, HelpListsIt) {
  EXPECT_EQ(kvbench("--help"), 0);
  EXPECT_THAT(out_, HasSubstr("trace analyze"));
  EXPECT_EQ(kvbench("trace --help"), 0);
  EXPECT_THAT(out_, HasSubstr("analyze"));
  EXPECT_THAT(out_, HasSubstr("kvbench trace analyze conversation.jsonl --capacity-blocks"));
}

}  // namespace
}  // namespace kvbench::cli
