// Does the cache type change the answers? On the real llama-server with a synthetic model: the
// same prompts answered greedily by an f16 and a q4_0 server, and by a second f16 start (the
// control, which must agree on every token); the report sets the agreement beside memory.

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<nlohmann::json> read_lines(const fs::path& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

TEST(Answers, CacheTypesAnswerTheSamePromptsBesideTheControl) {
  const fs::path dir = fresh_dir("answers");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "answers",
    "server": {"model": "synthetic:small", "threads": 1},
    "factors": {"prompt_tokens": [64], "num_ctx": [1024], "cache_type": ["f16", "q4_0"]},
    "repeats": 1, "max_tokens": 4, "warmup": 0,
    "answers": {"prompts": 4, "prompt_tokens": 96, "tokens": 24, "top_k": 5}})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto lines = read_lines(run_dir / "answers.jsonl");
  ASSERT_EQ(lines.size(), 12U) << "4 prompts in each block and 4 from the second f16 start";
  std::map<std::pair<std::string, int>, std::vector<nlohmann::json>> by;
  for (const auto& l : lines) {
    ASSERT_FALSE(l.contains("error")) << l.dump();
    ASSERT_EQ(l["ids"].size(), 24U);
    ASSERT_EQ(l["top"].size(), 24U);
    EXPECT_EQ(l["top"][0].size(), 5U) << "the top 5 of each position";
    by[{l["cache_type"].get<std::string>(), l["start"].get<int>()}].push_back(l);
  }
  const auto at = [&](const std::string& type, int start) -> const std::vector<nlohmann::json>& {
    return by[{type, start}];
  };
  ASSERT_EQ(at("f16", 1).size(), 4U);
  ASSERT_EQ(at("f16", 2).size(), 4U);
  ASSERT_EQ(at("q4_0", 1).size(), 4U);
  // The control: f16 on two starts agrees on every token.
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(at("f16", 1)[i]["ids"], at("f16", 2)[i]["ids"]) << "prompt " << i;
  }
  const fs::path f16_log =
      run_dir / fmt::format("server-block{}-answers.log", at("f16", 2)[0]["block"].get<int>());
  EXPECT_TRUE(fs::exists(f16_log)) << "the second start logs apart";

  const auto rep = run_kvbench({"report", run_dir.string(), "--json", (dir / "r.json").string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_THAT(rep.out, HasSubstr("## Does the cache type change the answers?"));
  EXPECT_THAT(rep.out, HasSubstr("Control: f16 on a second server start gave the same answers, "
                                 "token for token, in 4 of 4 prompts"));
  EXPECT_THAT(rep.out, ::testing::ContainsRegex(
                           "- \\*\\*q4_0\\*\\* \\(num_ctx 1024\\): KV [0-9]+ instead of [0-9]+ B "
                           "per token \\(-[0-9]+ %\\).* greedy answers identical to f16 in [0-4] "
                           "of 4 prompts"));
  const auto report = read_json(dir / "r.json");
  const auto& a = report["answers"];
  EXPECT_EQ(a["deterministic"], true);
  ASSERT_EQ(a["types"].size(), 1U);
  const auto& q = a["types"][0];
  EXPECT_EQ(q["prompts"], 4);
  // The quantities agree with each other and with the recorded ids.
  int identical = 0;
  double share = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto ref = at("f16", 1)[i]["ids"].get<std::vector<int>>();
    const auto ids = at("q4_0", 1)[i]["ids"].get<std::vector<int>>();
    identical += ref == ids ? 1 : 0;
    int same = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) {
      same += ref[k] == ids[k] ? 1 : 0;
    }
    share += same / 24.0 / 4;
  }
  EXPECT_EQ(q["identical_answers"], identical);
  EXPECT_NEAR(q["identical_token_share"].get<double>(), share, 1e-9);
  if (identical < 4) {
    ASSERT_TRUE(q["mean_first_difference"].is_number());
    EXPECT_GE(q["mean_first_difference"].get<double>(), 0);
    EXPECT_LT(q["mean_first_difference"].get<double>(), 24);
  } else {
    EXPECT_TRUE(q["mean_first_difference"].is_null());
  }
  if (q["mean_total_variation_before"].is_number()) {
    EXPECT_GE(q["mean_total_variation_before"].get<double>(), 0);
    EXPECT_LE(q["mean_total_variation_before"].get<double>(), 1);
  }
}

// On a managed `ollama serve` (the fixture) the answers are text only: compared by bytes, with
// the control on a second start; the fixture's quantized cache changes the answers to prompts
// of an odd number of bytes from their third word on.
TEST(Answers, OllamaAnswersAreComparedAsText) {
  const fs::path dir = fresh_dir("answers-ollama");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "answers-ollama",
    "server": {"kind": "ollama", "model": "synthetic-small"},
    "factors": {"prompt_tokens": [64], "num_ctx": [2048], "cache_type": ["f16", "q8_0"]},
    "repeats": 1, "max_tokens": 4, "warmup": 0,
    "answers": {"prompts": 6, "prompt_tokens": 64, "tokens": 12}})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q",
                              "--server-bin", KVBENCH_OLLAMA_FIXTURE},
                             300, {{"OLLAMA_FIXTURE_QUANT_DRIFT", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto lines = read_lines(run_dir / "answers.jsonl");
  ASSERT_EQ(lines.size(), 18U);
  std::map<std::pair<std::string, int>, std::vector<std::string>> texts;
  for (const auto& l : lines) {
    ASSERT_TRUE(l.contains("text")) << l.dump();
    EXPECT_FALSE(l.contains("ids"));
    texts[{l["cache_type"].get<std::string>(), l["start"].get<int>()}].push_back(l["text"]);
  }
  const auto f16 = texts[std::pair<std::string, int>{"f16", 1}];
  EXPECT_EQ(f16, (texts[std::pair<std::string, int>{"f16", 2}])) << "the control agrees";
  const auto q8 = texts[std::pair<std::string, int>{"q8_0", 1}];
  int identical = 0;
  for (std::size_t i = 0; i < f16.size(); ++i) {
    identical += f16[i] == q8[i] ? 1 : 0;
  }
  const auto rep = run_kvbench({"report", run_dir.string(), "--json", (dir / "r.json").string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_THAT(rep.out, HasSubstr("Control: f16 on a second server start gave the same answers"));
  EXPECT_THAT(rep.out, HasSubstr(fmt::format("greedy answers identical to f16 in {} of 6 prompts",
                                             identical)));
  EXPECT_THAT(rep.out, HasSubstr("text only: this server gives no token ids or probabilities"));
  const auto a = read_json(dir / "r.json")["answers"];
  EXPECT_EQ(a["types"][0]["text_only"], true);
  EXPECT_EQ(a["types"][0]["identical_answers"], identical);
  EXPECT_LT(identical, 6) << "the fixture's drift shows";
}

}  // namespace
}  // namespace kvbench::itest
