#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/analysis/analysis.h"
#include "harness/core/error.h"
#include "harness/scenario/scenario.h"
#include "tests/scenario/scenario_error.h"

namespace kvbench::scenario {
namespace {

using ::testing::HasSubstr;

// A scenario with `variants` and `gate` spliced in as JSON text.
std::string with(std::string_view variants, std::string_view gate = "") {
  std::string out = R"({"name": "ab", "server": {"model": "synthetic:tiny", "threads": 2},
  "factors": {"prompt_tokens": [64, 128], "num_ctx": [1024, 2048], "cache_type": ["f16", "q8_0"]})";
  if (!variants.empty()) {
    out += ",\n  \"variants\": " + std::string(variants);
  }
  if (!gate.empty()) {
    out += ",\n  \"gate\": " + std::string(gate);
  }
  return out + "}";
}

constexpr std::string_view kTwo =
    R"([{"name": "baseline"}, {"name": "candidate", "server": {"threads": 1, "args": ["--no-mmap"], "flash_attn": "on"}}])";

TEST(Variants, OverrideTheScenarioServerFieldByField) {
  const auto s = parse_scenario(with(kTwo), "s.json");
  ASSERT_EQ(s.variants.size(), 2U);
  EXPECT_EQ(s.variants[0].name, "baseline");
  EXPECT_EQ(s.variants[0].server.threads, 2);
  EXPECT_EQ(s.variants[0].server.args, std::vector<std::string>{});
  EXPECT_EQ(s.variants[0].server.flash_attn, "auto");
  EXPECT_EQ(s.variants[1].name, "candidate");
  EXPECT_EQ(s.variants[1].server.threads, 1);
  EXPECT_EQ(s.variants[1].server.args, std::vector<std::string>{"--no-mmap"});
  EXPECT_EQ(s.variants[1].server.flash_attn, "on");
  EXPECT_EQ(s.variants[1].server.model, "synthetic:tiny");
  EXPECT_EQ(s.gate.baseline, "baseline");  // the first variant unless named
  EXPECT_EQ(s.resolved["variants"][1]["server"]["threads"], 1);
  EXPECT_EQ(s.resolved["gate"]["baseline"], "baseline");
  EXPECT_EQ(s.resolved["gate"]["on_inconclusive"], "fail");
}

TEST(Variants, AnAttachedVariantDropsManagedOnlyFields) {
  const auto s = parse_scenario(
      R"({"name": "ab", "server": {"threads": 2, "binary": "/x/llama-server"},
          "factors": {"prompt_tokens": [64]},
          "variants": [{"name": "a"}, {"name": "b", "server": {"url": "http://127.0.0.1:9/"}}]})",
      "s.json");
  EXPECT_EQ(s.variants[1].server.url, "http://127.0.0.1:9");
  EXPECT_EQ(s.variants[1].server.threads, 0);
  EXPECT_EQ(s.variants[1].server.binary, "");
  EXPECT_FALSE(s.resolved["variants"][1]["server"].contains("threads"));
  EXPECT_TRUE(s.variants[0].server.managed());
}

TEST(Variants, ResolvedFormParsesToItself) {
  const auto s =
      parse_scenario(with(kTwo, R"({"alpha": 0.01, "max_sets": 4, "on_inconclusive": "warn",
          "baseline": "candidate", "metrics": [{"metric": "decode_tps", "margin": 0.05},
          {"metric": "ttft_ms", "margin": 0.1, "where": {"cache_type": "q8_0", "num_ctx": 2048}}]})"),
                     "s.json");
  const auto again = parse_scenario(s.resolved.dump(), "run.json");
  EXPECT_EQ(again.resolved, s.resolved);
  ASSERT_EQ(again.variants.size(), 2U);
  EXPECT_EQ(again.variants[1].server.args, std::vector<std::string>{"--no-mmap"});
  EXPECT_EQ(again.gate.alpha, 0.01);
  EXPECT_EQ(again.gate.max_sets, 4);
  EXPECT_FALSE(again.gate.inconclusive_fails);
  EXPECT_EQ(again.gate.baseline, "candidate");
  ASSERT_EQ(again.gate.metrics.size(), 2U);
  EXPECT_EQ(again.gate.metrics[1].metric, "ttft_ms");
  EXPECT_EQ(again.gate.metrics[1].margin, 0.1);
  const std::map<std::string, std::string> where = {{"cache_type", "q8_0"}, {"num_ctx", "2048"}};
  EXPECT_EQ(again.gate.metrics[1].where, where);
}

TEST(Variants, NoVariantsNoGateLeaveTheResolvedFormAsBefore) {
  const auto s = parse_scenario(with(""), "s.json");
  EXPECT_TRUE(s.variants.empty());
  EXPECT_FALSE(s.resolved.contains("variants"));
  EXPECT_FALSE(s.resolved.contains("gate"));
  EXPECT_EQ(s.gate.metrics.size(), 2U);
  EXPECT_EQ(s.gate.metrics[0].metric, "decode_tps");
  EXPECT_EQ(s.gate.metrics[0].margin, 0.05);
}

TEST(Variants, AGateWithoutVariantsIsRecordedWhenNotTheDefault) {
  const auto s = parse_scenario(with("", R"({"alpha": 0.01})"), "s.json");
  EXPECT_EQ(s.resolved["gate"]["alpha"], 0.01);
  EXPECT_EQ(parse_scenario(s.resolved.dump(), "run.json").gate.alpha, 0.01);
}

TEST(Variants, ProblemsNameLinePathAndExpectation) {
  EXPECT_THAT(scenario_error(with(R"([{"name": "only"}])")),
              HasSubstr("s.json:3: variants: expected at least two variants to compare"));
  EXPECT_THAT(scenario_error(with(R"([{"name": "a"}, {"name": "a"}])")),
              HasSubstr("variants[1].name: duplicate variant name 'a'"));
  EXPECT_THAT(scenario_error(with(R"([{"name": "a b"}, {"name": ""}])")),
              AllOf(HasSubstr("variants[0].name: 'a b': use only letters, digits"),
                    HasSubstr("variants[1].name: expected a non-empty string")));
  EXPECT_THAT(scenario_error(with(R"([{"name": "a"}, {"name": "b", "sever": {}}])")),
              HasSubstr("variants[1].sever: unknown key (did you mean 'server'?)"));
  EXPECT_THAT(
      scenario_error(with(R"([{"name": "a"}, {"name": "b", "server": {"kind": "ollama"}}])")),
      HasSubstr("variants[1].server.kind: every variant runs on the scenario's server "
                "kind 'llama-server'"));
  EXPECT_THAT(scenario_error(with(R"([{"name": "a"}, {"name": "b", "server": {"threads": -1}}])")),
              HasSubstr("variants[1].server.threads: -1 is out of range"));
  EXPECT_THAT(scenario_error(with(R"([{"name": "a"}, {"name": "b", "server": {"args": ["-t"]}}])")),
              HasSubstr("variants[1].server.args[0]: '-t' is set by kvbench itself"));
  EXPECT_THAT(
      scenario_error(
          with(R"([{"name": "a"}, {"name": "b", "server": {"args": ["--x", "a\nb"]}}])")),
      HasSubstr(
          "variants[1].server.args[1]: contains a control character (code 10) at position 1"));
  EXPECT_THAT(scenario_error(with(R"({"name": "a"})")), HasSubstr("variants: expected an array"));
  EXPECT_THAT(
      scenario_error(with(R"([{"name": "a"}, {"name": "b", "server": {"flash_attn": "off"}}])")),
      HasSubstr("variants[1].server.flash_attn: a quantized V cache needs flash"));
  EXPECT_THAT(
      scenario_error(with(R"([{"name": "a"}, {"name": "b", "server": {"url": "http://h:1"}}])")),
      HasSubstr("variants[1].server.url: an attached variant cannot vary num_ctx"));
}

TEST(Gate, ProblemsNameLinePathAndExpectation) {
  EXPECT_THAT(
      scenario_error(with(kTwo, R"({"metrics": [{"metric": "decode_tp", "margin": 0.05}]})")),
      HasSubstr("s.json:4: gate.metrics[0].metric: unknown metric 'decode_tp' (did you "
                "mean 'decode_tps'?)"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"metrics": [{"metric": "ttft_ms", "margin": 1.5}]})")),
              HasSubstr("gate.metrics[0].margin: expected a fraction in (0, 1)"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"metrics": [{"metric": "ttft_ms"}]})")),
              HasSubstr("gate.metrics[0].margin: missing"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"metrics": []})")),
              HasSubstr("gate.metrics: expected a non-empty array"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"metrics": [{"metric": "ttft_ms", "margin": 0.1,
                "where": {"cache_type": "q4_0"}}]})")),
              HasSubstr("s.json:5: gate.metrics[0].where.cache_type: 'q4_0' is not a level of "
                        "factors.cache_type (did you mean 'q8_0'?): expected one of f16, q8_0"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"metrics": [{"metric": "ttft_ms", "margin": 0.1,
                "where": {"num_ctx": 4096}}]})")),
              HasSubstr("gate.metrics[0].where.num_ctx: '4096' is not a level of factors.num_ctx"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"metrics": [{"metric": "ttft_ms", "margin": 0.1,
                "where": {"cache": "f16"}}]})")),
              HasSubstr("gate.metrics[0].where.cache: unknown key"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"alpha": 0.5})")),
              HasSubstr("gate.alpha: expected a level in (0, 0.5)"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"max_sets": 0})")),
              HasSubstr("gate.max_sets: 0 is out of range: expected 1 to 100"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"on_inconclusive": "warm"})")),
              HasSubstr("gate.on_inconclusive: 'warm' (did you mean 'warn'?): expected 'fail' or "
                        "'warn'"));
  EXPECT_THAT(scenario_error(with(kTwo, R"({"baseline": "basline"})")),
              HasSubstr("gate.baseline: 'basline' is no variant (did you mean 'baseline'?): "
                        "expected one of baseline, candidate"));
  EXPECT_THAT(scenario_error(with("", R"({"baseline": "a"})")),
              HasSubstr("gate.baseline: names a variant, but the scenario has no variants"));
}

TEST(Gate, AcceptsEveryMetricOfTheAnalysis) {
  for (const auto& m : analysis::metrics()) {
    const auto s = parse_scenario(
        with(kTwo, fmt::format(R"({{"metrics": [{{"metric": "{}", "margin": 0.2}}]}})", m.key)),
        "s.json");
    EXPECT_EQ(s.gate.metrics.at(0).metric, m.key);
  }
}

// "every": 0 means no probes; a probe length beside it is a contradiction, while the resolved
// form of a run without probes (the default length) keeps reading.
TEST(ScenarioProbes, EveryZeroWithAProbeLengthIsRefused) {
  EXPECT_THAT(scenario_error(R"({"name": "x", "factors": {"prompt_tokens": [256]},
  "probes": {"every": 0, "prompt_tokens": 64}})"),
              HasSubstr("probes.every: 0 means no probes, yet probes.prompt_tokens asks for "
                        "probes of 64 tokens"));
  const auto s = parse_scenario(R"({"name": "x", "factors": {"prompt_tokens": [256]},
  "probes": {"every": 0, "prompt_tokens": 256}})",
                                "run.json");
  EXPECT_EQ(s.probes.every, 0);
  EXPECT_EQ(parse_scenario(R"({"name": "x", "factors": {"prompt_tokens": [256]},
  "probes": {"every": 3, "prompt_tokens": 64}})",
                           "s.json")
                .probes.prompt_tokens,
            64);
}

}  // namespace
}  // namespace kvbench::scenario
