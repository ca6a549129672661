// The OpenAI- and Anthropic-compatible kinds in scenarios: kind, endpoint and what an attached
// server of these kinds cannot vary; every shipped scenario parses.

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/scenario/kinds.h"
#include "harness/scenario/scenario.h"

namespace kvbench::scenario {
namespace {

using ::testing::HasSubstr;

std::string compat_error(const std::string& text) {
  try {
    parse_scenario(text, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

TEST(CompatKinds, KindAndEndpointParseAndAreRecorded) {
  const auto s = parse_scenario(
      R"({"name": "x", "server": {"kind": "openai", "endpoint": "completions",
          "url": "http://127.0.0.1:8000/v1/", "model": "m", "api_key_env": "K"},
          "factors": {"prompt_tokens": [256]}})",
      "s.json");
  EXPECT_EQ(s.server.kind, ServerKind::openai);
  EXPECT_EQ(s.server.endpoint, "completions");
  EXPECT_EQ(s.server.url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(s.resolved["server"]["kind"], "openai");
  EXPECT_EQ(s.resolved["server"]["endpoint"], "completions");
  const auto a = parse_scenario(
      R"({"name": "x", "server": {"kind": "anthropic"}, "factors": {"prompt_tokens": [256]}})",
      "s.json");
  EXPECT_EQ(a.server.kind, ServerKind::anthropic);
  EXPECT_TRUE(served_by_llama_server(a.server.kind));
  EXPECT_FALSE(a.resolved["server"].contains("endpoint"));
}

TEST(CompatKinds, BadKindEndpointAndRestartFactorsAreRefused) {
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "vllm"},
                               "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("expected 'llama-server', 'ollama', 'openai' or 'anthropic'"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai", "endpoint": "responses"},
                               "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("server.endpoint: 'responses': expected 'chat'"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "anthropic", "endpoint": "chat"},
                               "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("only the 'openai' kind has an endpoint"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai", "url": "http://h/v1"},
                               "factors": {"prompt_tokens": [256], "cache_type": ["f16", "q8_0"]}})"),
              HasSubstr("cannot vary cache_type"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "anthropic", "url": "http://h/v1"},
                               "factors": {"prompt_tokens": [256], "num_ctx": [2048, 4096]}})"),
              HasSubstr("cannot vary num_ctx"));
}

TEST(CompatKinds, CacheBreakpointOnlyOnAnthropic) {
  const auto a = parse_scenario(
      R"({"name": "x", "server": {"kind": "anthropic", "cache_breakpoint": "end"},
          "factors": {"prompt_tokens": [256]}})",
      "s.json");
  EXPECT_EQ(a.server.cache_breakpoint, "end");
  EXPECT_EQ(a.resolved["server"]["cache_breakpoint"], "end");
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai", "cache_breakpoint": "end"},
                               "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("only the 'anthropic' kind takes cache_control breakpoints"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "anthropic",
                               "cache_breakpoint": "after_system"},
                               "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("'after_system': expected 'end'"));
}

// A provider's caching rule: nothing below its minimum, then whole steps; attached servers only.
TEST(CompatKinds, CacheRuleRoundsTheSharedPrefixAndIsRecorded) {
  const auto s = parse_scenario(
      R"({"name": "x", "server": {"kind": "openai", "url": "http://h/v1", "model": "m",
          "cache_rule": {"min_tokens": 1024, "step": 128}}, "factors": {"prompt_tokens": [256]}})",
      "s.json");
  EXPECT_TRUE(s.server.cache_rule.stated());
  EXPECT_EQ(s.server.cache_rule.apply(0), 0);
  EXPECT_EQ(s.server.cache_rule.apply(1023), 0);
  EXPECT_EQ(s.server.cache_rule.apply(1024), 1024);
  EXPECT_EQ(s.server.cache_rule.apply(1151), 1024);
  EXPECT_EQ(s.server.cache_rule.apply(1152), 1152);
  EXPECT_EQ(s.resolved["server"]["cache_rule"]["step"], 128);
  const CacheRule blocks{0, 16};
  EXPECT_EQ(blocks.apply(15), 0);
  EXPECT_EQ(blocks.apply(47), 32);
  const CacheRule exact;
  EXPECT_FALSE(exact.stated());
  EXPECT_EQ(exact.apply(47), 47);
  EXPECT_FALSE(parse_scenario(R"({"name": "x", "factors": {"prompt_tokens": [256]}})", "s.json")
                   .resolved["server"]
                   .contains("cache_rule"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai",
                               "cache_rule": {"step": 16}}, "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("server.cache_rule: a managed llama-server caches every shared token"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai", "url": "http://h/v1",
                               "cache_rule": {"step": 0}}, "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("server.cache_rule.step"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai", "url": "http://h/v1",
                               "cache_rule": {"minimum": 1}}, "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("minimum"));
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai", "url": "http://h/v1",
                               "cache_rule": 128}, "factors": {"prompt_tokens": [256]}})"),
              HasSubstr("server.cache_rule: expected an object"));
}

// The answers experiment compares cache types on a managed llama-server of any kind.
TEST(Answers, ParsedAndRefusedWhereTheyCannotCompare) {
  const auto s = parse_scenario(
      R"({"name": "x", "server": {"kind": "openai"},
          "factors": {"prompt_tokens": [256], "cache_type": ["f16", "q8_0"]},
          "answers": {"prompts": 4, "tokens": 16}})",
      "s.json");
  EXPECT_TRUE(s.answers.active());
  EXPECT_EQ(s.answers.reference, "f16");
  EXPECT_EQ(s.answers.top_k, 10);
  EXPECT_EQ(s.resolved["answers"]["tokens"], 16);
  EXPECT_TRUE(parse_scenario(R"({"name": "x", "server": {"kind": "ollama", "model": "m"},
                               "factors": {"prompt_tokens": [256], "cache_type": ["f16", "q8_0"]},
                               "answers": {"prompts": 4}})",
                             "s.json")
                  .answers.active())
      << "a managed ollama serve answers as text";
  EXPECT_THAT(compat_error(R"({"name": "x", "server": {"kind": "openai", "url": "http://h/v1"},
                               "factors": {"prompt_tokens": [256]},
                               "answers": {"prompts": 4}})"),
              HasSubstr("answers: the answers are compared on a managed server"));
  EXPECT_THAT(compat_error(R"({"name": "x", "factors": {"prompt_tokens": [256]},
                               "answers": {"prompts": 4}})"),
              HasSubstr("factors.cache_type: the answers compare cache types"));
  EXPECT_THAT(compat_error(R"({"name": "x", "factors": {"prompt_tokens": [256],
                               "cache_type": ["q8_0", "q4_0"]}, "answers": {"prompts": 4}})"),
              HasSubstr("answers.reference: 'f16' is not one of factors.cache_type"));
  EXPECT_THAT(compat_error(R"({"name": "x", "factors": {"prompt_tokens": [256], "num_ctx": [512],
                               "cache_type": ["f16", "q8_0"]},
                               "answers": {"prompts": 4, "prompt_tokens": 500}})"),
              HasSubstr("answers.prompt_tokens: 500 prompt tokens and 64 generated do not fit"));
  EXPECT_THAT(compat_error(R"({"name": "x", "factors": {"prompt_tokens": [256],
                               "cache_type": ["f16", "q8_0"]}, "answers": {"tokens": 4}})"),
              HasSubstr("answers.prompts: missing"));
  EXPECT_THAT(compat_error(R"({"name": "x", "factors": {"prompt_tokens": [256],
                               "cache_type": ["f16", "q8_0"]}, "answers": {"prompts": 4, "top_k": 50}})"),
              HasSubstr("answers.top_k"));
}

// The user's own prompts: a JSON array of strings beside the scenario.
TEST(Answers, PromptsFromAFileBesideTheScenario) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kvbench-answers-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "mine.json") << R"(["What is 2 + 2?", "Name a colour."])";
  std::ofstream(dir / "bad.json") << R"(["ok", 3])";
  const std::string source = (dir / "s.json").string();
  const std::string head = R"({"name": "x", "factors": {"prompt_tokens": [256],
      "cache_type": ["f16", "q8_0"]}, "answers": )";
  const auto s = parse_scenario(head + R"({"file": "mine.json", "tokens": 8}})", source);
  EXPECT_EQ(s.answers.prompts, 2);
  ASSERT_EQ(s.answers.texts.size(), 2U);
  EXPECT_EQ(s.answers.texts[1], "Name a colour.");
  EXPECT_EQ(s.resolved["answers"]["file"], "mine.json");
  const auto error = [&](const std::string& answers) {
    try {
      parse_scenario(head + answers + "}", source);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error(R"({"file": "bad.json"})"),
              HasSubstr("'bad.json' [1]: expected a non-empty string"));
  EXPECT_THAT(error(R"({"file": "none.json"})"), HasSubstr("'none.json' is not a readable file"));
  EXPECT_THAT(error(R"({"file": "mine.json", "prompts": 4})"),
              HasSubstr("give 'file' or 'prompts'"));
  std::filesystem::remove_all(dir);
}

TEST(CompatKinds, EveryShippedScenarioParses) {
  int n = 0;
  // scenarios/lesson/ holds the lesson's lab definitions, not scenarios.
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(KVBENCH_SOURCE_DIR) / "scenarios")) {
    if (e.path().extension() == ".json") {
      EXPECT_NO_THROW(load_scenario(e.path().string())) << e.path();
      ++n;
    }
  }
  EXPECT_GE(n, 8);
}

// The table of kinds is the one place a kind is named: every name reads back to its kind, and
// what a kind needs of server.model follows from it.
TEST(CompatKinds, TheTableOfKindsDeclaresWhatEachNeedsOfTheModel) {
  for (const auto& k : kinds()) {
    EXPECT_EQ(kind_named(k.name), k.kind);
    EXPECT_EQ(to_string(k.kind), k.name);
  }
  EXPECT_FALSE(kind_named("vllm"));
  const auto problem = [](ServerKind kind, const std::string& url, const std::string& model) {
    ServerSpec spec;
    spec.kind = kind;
    spec.url = url;
    spec.model = model;
    return model_problem(spec).has_value();
  };
  EXPECT_FALSE(problem(ServerKind::llama_server, "http://h", "synthetic:small"));
  EXPECT_FALSE(problem(ServerKind::openai, "", "synthetic:small")) << "served by llama-server";
  EXPECT_FALSE(problem(ServerKind::anthropic, "", "synthetic:small"));
  EXPECT_TRUE(problem(ServerKind::openai, "http://h/v1", "synthetic:small"));
  EXPECT_TRUE(problem(ServerKind::anthropic, "http://h/v1", "synthetic:small"));
  EXPECT_TRUE(problem(ServerKind::ollama, "http://h", "synthetic:small"));
  EXPECT_TRUE(problem(ServerKind::ollama, "", "synthetic:tiny")) << "a managed ollama serve too";
  EXPECT_FALSE(problem(ServerKind::ollama, "http://h", "llama3.2:1b"));
  EXPECT_FALSE(problem(ServerKind::openai, "http://h/v1", "m"));
}

}  // namespace
}  // namespace kvbench::scenario
