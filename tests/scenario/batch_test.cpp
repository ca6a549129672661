// The server's batch sizes as scenario settings: a field for every block or a factor that forms
// blocks, each refused where the server cannot take it, before any server is contacted.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/plan/plan.h"
#include "harness/scenario/edits.h"
#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_error.h"

namespace kvbench::scenario {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string batch_scenario(const std::string& server, const std::string& factors) {
  return R"({"name": "b", "server": {)" + server + R"(}, "factors": {"prompt_tokens": [256])" +
         factors + "}}";
}

TEST(BatchSize, AFieldHoldsForEveryBlockAndAFactorFormsBlocks) {
  const auto field = parse_scenario(batch_scenario(R"("batch_size": 512)", ""), "s.json");
  EXPECT_EQ(field.server.batch_size, 512);
  EXPECT_FALSE(field.server.ubatch_size);
  EXPECT_EQ(field.resolved["server"]["batch_size"], 512);
  const auto factor = parse_scenario(
      batch_scenario("",
                     R"(, "batch_size": [512, 2048], "ubatch_size": 128, "num_ctx": [4096, 8192])"),
      "s.json");
  EXPECT_EQ(factor.factors.batch_size, (std::vector<int>{512, 2048}));
  EXPECT_EQ(factor.factors.ubatch_size, (std::vector<int>{128}));
  EXPECT_EQ(factor.resolved["factors"]["batch_size"], json({512, 2048}));
  const auto plan = plan::make_plan(factor);
  std::set<std::string> labels;
  for (const auto& b : plan.blocks) {
    ASSERT_TRUE(b.config.batch_size && b.config.ubatch_size);
    EXPECT_EQ(*b.config.ubatch_size, 128);
    labels.insert(b.config.label());
  }
  EXPECT_EQ(labels.size(), 4U) << "two batch sizes crossed with two context windows";
  EXPECT_TRUE(labels.count("ctx=8192 kv=f16 batch=2048 ubatch=128"));
  EXPECT_EQ(plan::to_json(plan)["blocks"][0]["ubatch_size"], 128);
  // Unset, a scenario and its plan are as before.
  const auto plain = parse_scenario(batch_scenario("", ""), "s.json");
  EXPECT_FALSE(plain.resolved["server"].contains("batch_size"));
  EXPECT_FALSE(plain.resolved["factors"].contains("batch_size"));
  EXPECT_EQ(plan::make_plan(plain).blocks[0].config.label(), "ctx=4096 kv=f16");
}

TEST(BatchSize, WhatTheServerCannotTakeIsRefusedNamingIt) {
  EXPECT_THAT(
      scenario_error(batch_scenario(R"("batch_size": 512)", R"(, "batch_size": [256, 512])")),
      HasSubstr("factors.batch_size: server.batch_size gives it too"));
  EXPECT_THAT(scenario_error(batch_scenario(R"("batch_size": 256, "ubatch_size": 512)", "")),
              HasSubstr("server.ubatch_size: ubatch_size 512 is above batch_size 256"));
  EXPECT_THAT(
      scenario_error(batch_scenario("", R"(, "batch_size": [64, 256], "ubatch_size": [128])")),
      HasSubstr("factors.ubatch_size: ubatch_size 128 is above batch_size 64"));
  EXPECT_THAT(
      scenario_error(batch_scenario(R"("kind": "ollama", "model": "m", "ubatch_size": 128)", "")),
      HasSubstr("Ollama has no micro-batch setting"));
  EXPECT_THAT(
      scenario_error(batch_scenario(R"("url": "http://127.0.0.1:8080", "batch_size": 512)", "")),
      HasSubstr("an attached server (server.url) keeps the batch sizes"));
  EXPECT_THAT(scenario_error(batch_scenario(R"("batch_size": 512, "args": ["-b", "256"])", "")),
              HasSubstr("server.batch_size: given twice: as batch_size and as '-b' in args"));
  EXPECT_THAT(scenario_error(batch_scenario("", R"(, "batch_size": [0])")),
              HasSubstr("factors.batch_size[0]"));
  // Ollama takes a batch per request, attached too.
  const auto ollama = parse_scenario(
      batch_scenario(
          R"("kind": "ollama", "model": "m", "url": "http://127.0.0.1:11434", "batch_size": 64)",
          ""),
      "s.json");
  EXPECT_EQ(ollama.server.batch_size, 64);
}

TEST(BatchSize, FlagsGiveTheLevelsAndReplaceTheFilesField) {
  ScenarioEdits e;
  e.batch_size = {64, 256};
  e.ubatch_size = {32};
  const json d = apply_edits(json::parse(batch_scenario(R"("batch_size": 512)", "")), e);
  EXPECT_FALSE(d["server"].contains("batch_size"));
  EXPECT_EQ(d["factors"]["batch_size"], json({64, 256}));
  EXPECT_EQ(d["factors"]["ubatch_size"], json({32}));
  EXPECT_NE(e.made_name().find("-b64-256-ub32"), std::string::npos) << e.made_name();
  EXPECT_NE(std::find(e.flags().begin(), e.flags().end(), "--batch-size"), e.flags().end());
}

}  // namespace
}  // namespace kvbench::scenario
