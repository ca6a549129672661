// A run's scenario read back from its run.json for a report (scenario::recorded_scenario): typed
// as a scenario file gives it, without reading the files it names and without the checks a
// scenario file gets.

#include <filesystem>
#include <fstream>
#include <variant>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/scenario/scenario.h"
#include "harness/workloads/scenario_workload.h"

namespace kvbench::scenario {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json recorded_json(const std::string& run) {
  std::ifstream in(fs::path(KVBENCH_TEST_DATA) / "runs" / run / "run.json");
  return json::parse(in)["scenario"];
}

TEST(RecordedScenario, ReadsTheRunsSettingsTyped) {
  const Scenario t = recorded_scenario(recorded_json("trace-tiny"));
  EXPECT_EQ(t.name, "trace-tiny");
  EXPECT_EQ(t.seed, 7U);
  EXPECT_TRUE(t.server.managed());
  EXPECT_EQ(t.server.model, "synthetic:tiny");
  EXPECT_TRUE(std::holds_alternative<workloads::TraceReplay>(workloads::of(t)))
      << "the trace's file is not read: the run's records are the report's";
  const Scenario a = recorded_scenario(recorded_json("answers-tiny"));
  EXPECT_EQ(a.answers.prompts, 3);
  EXPECT_EQ(a.answers.prompt_tokens, 48);
  EXPECT_EQ(a.answers.tokens, 8);
  EXPECT_EQ(a.answers.top_k, 3);
}

TEST(RecordedScenario, AnAttachedServersCacheRuleAndAnUnreadFile) {
  const Scenario s = recorded_scenario(json::parse(R"({
      "name": "attached", "server": {"kind": "vllm", "url": "http://127.0.0.1:8000",
      "model": "m", "cache_rule": {"step": 16}},
      "answers": {"file": "gone/prompts.json"}, "unknown_later_key": 1})"));
  EXPECT_EQ(s.name, "attached");
  EXPECT_FALSE(s.server.managed());
  EXPECT_EQ(s.server.cache_rule.step, 16);
  EXPECT_EQ(s.answers.file, "gone/prompts.json");
  EXPECT_TRUE(s.answers.texts.empty()) << "a report reads no file a scenario named";
  const Scenario none = recorded_scenario(json());
  EXPECT_TRUE(none.name.empty());
  EXPECT_TRUE(std::holds_alternative<workloads::Sweep>(workloads::of(none)));
}

}  // namespace
}  // namespace kvbench::scenario
