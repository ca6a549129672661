#include "harness/scenario/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/scenario/suggest.h"
#include "harness/workloads/scenario_workload.h"
#include "tests/scenario/scenario_error.h"

namespace kvbench::scenario {
namespace {

using ::testing::HasSubstr;
using workloads::Conversation;
using workloads::Sweep;

constexpr std::string_view kMinimal = R"({"name": "x", "factors": {"prompt_tokens": [256]}})";

TEST(Scenario, MinimalScenarioGetsDefaults) {
  const auto s = parse_scenario(kMinimal, "s.json");
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.factors.prompt_tokens, std::vector<int>{256});
  EXPECT_EQ(s.factors.num_ctx, std::vector<int>{4096});
  EXPECT_EQ(s.factors.cache_type, std::vector<std::string>{"f16"});
  EXPECT_EQ(s.server.model, "synthetic:small");
  EXPECT_TRUE(s.server.managed());
  EXPECT_EQ(s.repeats, 5);
  EXPECT_EQ(s.resolved["factors"]["num_ctx"][0], 4096);
}

TEST(Scenario, CommentsAndFullExampleParse) {
  const auto s = parse_scenario(R"(
    // prompt length
    { "name": "prompt-length",
      "server": { "kind": "llama-server", "model": "synthetic:small" },  /* managed */
      "factors": { "prompt_tokens": [256, 1024, 4096], "num_ctx": [8192], "cache_type": ["f16", "q8_0"] },
      "repeats": 5, "seed": 42, "max_tokens": 32 })",
                                "s.json");
  EXPECT_EQ(s.factors.prompt_tokens, (std::vector<int>{256, 1024, 4096}));
  EXPECT_EQ(s.factors.cache_type, (std::vector<std::string>{"f16", "q8_0"}));
  EXPECT_EQ(s.seed, 42U);
}

TEST(Scenario, SingleValuesAreOneLevelFactors) {
  const auto s = parse_scenario(
      R"({"name": "x", "factors": {"prompt_tokens": 300, "num_ctx": 2048, "cache_type": "q8_0"}})",
      "s.json");
  EXPECT_EQ(s.factors.prompt_tokens, std::vector<int>{300});
  EXPECT_EQ(s.factors.num_ctx, std::vector<int>{2048});
}

TEST(Scenario, PromptThatDoesNotFitNamesPathAndNumbers) {
  EXPECT_EQ(scenario_error(R"({"name": "x", "max_tokens": 32,
      "factors": {"prompt_tokens": [256, 1024, 8192], "num_ctx": [8192]}})"),
            "s.json:2: factors.prompt_tokens[2]: 8192 tokens do not fit num_ctx 8192 with "
            "max_tokens 32");
}

TEST(Scenario, NotJsonIsAnInputError) {
  EXPECT_THAT(scenario_error("{ nope"), HasSubstr("s.json: not valid JSON"));
  EXPECT_THAT(scenario_error("[1, 2]"), HasSubstr("expected a JSON object, got an array"));
}

TEST(Scenario, UnknownKeysSuggestTheNearestKnownKey) {
  EXPECT_THAT(scenario_error(R"({"name": "x", "repeat": 3, "factors": {"prompt_tokens": [1]}})"),
              HasSubstr("s.json:1: repeat: unknown key (did you mean 'repeats'?)"));
  EXPECT_THAT(
      scenario_error(R"({"name": "x", "factors": {"prompt_tokens": [1], "numctx": [2048]}})"),
      HasSubstr("factors.numctx: unknown key (did you mean 'num_ctx'?)"));
  const std::string e =
      scenario_error(R"({"name": "x", "zzzzzzzz": 1, "factors": {"prompt_tokens": [1]}})");
  EXPECT_THAT(e, HasSubstr("s.json:1: zzzzzzzz: unknown key"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("did you mean")));
}

TEST(Scenario, EveryProblemIsListed) {
  const std::string e =
      scenario_error(R"({"factors": {"prompt_tokens": [0, "a"], "cache_type": ["q9"]},
      "repeats": -1, "seed": -5, "max_tokens": 1.5, "timeout_s": 0, "unique_first_line": 1})");
  EXPECT_THAT(e, HasSubstr("name: missing"));
  EXPECT_THAT(e, HasSubstr("factors.prompt_tokens[0]: 0 is out of range: expected 1 to"));
  EXPECT_THAT(e, HasSubstr("factors.prompt_tokens[1]: expected an integer, got the string \"a\""));
  EXPECT_THAT(e, HasSubstr("factors.cache_type[0]: unknown cache type 'q9'"));
  EXPECT_THAT(e, HasSubstr("repeats: -1 is out of range: expected 1 to 10000"));
  EXPECT_THAT(e, HasSubstr("seed: expected a non-negative integer"));
  EXPECT_THAT(e, HasSubstr("max_tokens: expected an integer, got the number 1.5"));
  EXPECT_THAT(e, HasSubstr("timeout_s: expected a number of seconds"));
  EXPECT_THAT(e, HasSubstr("unique_first_line: expected true or false"));
}

TEST(Scenario, CacheTypeTypoGetsASuggestion) {
  EXPECT_THAT(
      scenario_error(R"({"name": "x", "factors": {"prompt_tokens": [1], "cache_type": "q8_1"}})"),
      HasSubstr("unknown cache type 'q8_1' (did you mean 'q8_0'?)"));
}

TEST(Scenario, DuplicateAndEmptyFactorLevels) {
  EXPECT_THAT(scenario_error(R"({"name": "x", "factors": {"prompt_tokens": [256, 256]}})"),
              HasSubstr("factors.prompt_tokens[1]: duplicate value 256"));
  EXPECT_THAT(scenario_error(R"({"name": "x", "factors": {"prompt_tokens": []}})"),
              HasSubstr("factors.prompt_tokens: expected at least one value"));
  EXPECT_THAT(scenario_error(R"({"name": "x", "factors": {}})"),
              HasSubstr("factors.prompt_tokens: missing"));
  EXPECT_THAT(scenario_error(R"({"name": "x"})"), HasSubstr("factors: missing"));
  EXPECT_THAT(scenario_error(R"({"name": "x", "factors": 3})"),
              HasSubstr("factors: expected an object, got the number 3"));
}

TEST(Scenario, ServerFieldsAreChecked) {
  EXPECT_THAT(
      scenario_error(
          R"({"name": "x", "server": {"kind": "vllm"}, "factors": {"prompt_tokens": [1]}})"),
      HasSubstr("server.kind: unknown server kind 'vllm'"));
  EXPECT_THAT(
      scenario_error(
          R"({"name": "x", "server": {"url": "localhost:8080"}, "factors": {"prompt_tokens": [1]}})"),
      HasSubstr("server.url: 'localhost:8080' is not an http:// or https:// URL"));
  EXPECT_THAT(
      scenario_error(
          R"({"name": "x", "server": {"args": "-t 2"}, "factors": {"prompt_tokens": [1]}})"),
      HasSubstr("server.args: expected an array of strings"));
  EXPECT_THAT(
      scenario_error(
          R"({"name": "x", "server": {"flash_attn": "yes"}, "factors": {"prompt_tokens": [1]}})"),
      HasSubstr("server.flash_attn: 'yes': expected 'on', 'off' or 'auto'"));
  EXPECT_THAT(
      scenario_error(R"({"name": "x", "server": "llama", "factors": {"prompt_tokens": [1]}})"),
      HasSubstr("server: expected an object"));
}

TEST(Scenario, ContradictionsAreReported) {
  EXPECT_THAT(
      scenario_error(R"({"name": "x", "server": {"flash_attn": "off"},
      "factors": {"prompt_tokens": [1], "cache_type": ["f16", "q4_0"]}})"),
      HasSubstr("factors.cache_type[1]: a quantized V cache ('q4_0') needs flash attention"));
  EXPECT_THAT(
      scenario_error(R"({"name": "x", "server": {"url": "http://127.0.0.1:8080", "threads": 2},
      "factors": {"prompt_tokens": [1]}})"),
      HasSubstr("apply only to a managed server"));
  EXPECT_THAT(scenario_error(R"({"name": "x", "server": {"url": "http://127.0.0.1:8080"},
      "factors": {"prompt_tokens": [1], "num_ctx": [2048, 4096]}})"),
              HasSubstr("factors.num_ctx: an attached server (server.url) cannot vary num_ctx"));
}

TEST(Scenario, AttachedOllamaVariesNumCtxButNotCacheType) {
  const auto s = parse_scenario(R"({"name": "x",
      "server": {"kind": "ollama", "model": "llama3.2:1b", "url": "http://127.0.0.1:11434"},
      "factors": {"prompt_tokens": [1], "num_ctx": [2048, 4096]}})",
                                "s.json");
  EXPECT_EQ(s.factors.num_ctx, (std::vector<int>{2048, 4096}));
  EXPECT_THAT(scenario_error(R"({"name": "x",
      "server": {"kind": "ollama", "url": "http://127.0.0.1:11434"},
      "factors": {"prompt_tokens": [1], "cache_type": ["f16", "q8_0"]}})"),
              HasSubstr("factors.cache_type: an attached server (server.url) cannot vary"));
}

TEST(Scenario, OllamaTakesTheEditPositionExperiment) {
  const auto s = parse_scenario(R"({"name": "x",
      "server": {"kind": "ollama", "model": "llama3.2:1b", "url": "http://127.0.0.1:11434"},
      "factors": {"prompt_tokens": [1024], "edit_position": [0.5, "question", "none"]}})",
                                "s.json");
  EXPECT_EQ(s.factors.edit_position.size(), 3U);
}

TEST(Scenario, OllamaTakesConcurrencyManagedOrAttachedAtAnyLevels) {
  const auto managed = parse_scenario(R"({"name": "x",
      "server": {"kind": "ollama", "model": "llama3.2:1b"},
      "factors": {"prompt_tokens": [64]}, "concurrency": {"streams": [1, 4]}})",
                                      "s.json");
  EXPECT_EQ(managed.concurrency.slot_levels(), (std::vector<int>{1, 4}));
  // Attached, every level goes to the one server: those beyond its OLLAMA_NUM_PARALLEL queue.
  const auto attached = parse_scenario(R"({"name": "x",
      "server": {"kind": "ollama", "model": "llama3.2:1b", "url": "http://127.0.0.1:11434"},
      "factors": {"prompt_tokens": [64]}, "concurrency": {"streams": [2, 8]}})",
                                       "s.json");
  EXPECT_EQ(attached.concurrency.slot_levels(), (std::vector<int>{2, 8}));
  EXPECT_THAT(scenario_error(R"({"name": "x",
      "server": {"kind": "ollama", "model": "llama3.2:1b"},
      "factors": {"prompt_tokens": [1024], "edit_position": [0.5]},
      "concurrency": {"streams": [4]}})"),
              HasSubstr("concurrency: the edit-position experiment reads each pair on one slot"));
  EXPECT_THAT(scenario_error(R"({"name": "x", "server": {"url": "http://127.0.0.1:8080"},
      "factors": {"prompt_tokens": [64]}, "concurrency": {"streams": [1, 4]}})"),
              HasSubstr("concurrency.streams: an attached server (server.url) cannot change its "
                        "slots"));
}

TEST(Scenario, AttachedUrlLosesTrailingSlash) {
  const auto s = parse_scenario(
      R"({"name": "x", "server": {"url": "http://127.0.0.1:8080/"}, "factors": {"prompt_tokens": [1]}})",
      "s.json");
  EXPECT_EQ(s.server.url, "http://127.0.0.1:8080");
  EXPECT_FALSE(s.server.managed());
}

TEST(Scenario, MissingFileIsAnInputError) {
  EXPECT_THROW(load_scenario("/nonexistent/kvbench.json"), InputError);
}

TEST(Suggest, EditDistanceAndNearest) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
  EXPECT_EQ(edit_distance("", "abc"), 3U);
  EXPECT_EQ(nearest("repeat", {"repeats", "seed"}), "repeats");
  EXPECT_EQ(nearest("xyz", {"repeats", "seed"}), "");
}

}  // namespace
}  // namespace kvbench::scenario

#include "harness/scenario/locate.h"

namespace kvbench::scenario {
namespace {

TEST(Locate, LinesOfEveryValueWithCommentsAndStrings) {
  const auto lines = value_lines(R"({
  // a comment with "quotes" and [brackets]
  "name": "a \" tricky } string",
  "factors": {
    "prompt_tokens": [256,
       1024, /* inline */ 4096]
  }
})");
  EXPECT_EQ(lines.at(""), 1);
  EXPECT_EQ(lines.at("name"), 3);
  EXPECT_EQ(lines.at("factors"), 4);
  EXPECT_EQ(lines.at("factors.prompt_tokens"), 5);
  EXPECT_EQ(lines.at("factors.prompt_tokens[0]"), 5);
  EXPECT_EQ(lines.at("factors.prompt_tokens[1]"), 6);
  EXPECT_EQ(lines.at("factors.prompt_tokens[2]"), 6);
}

TEST(Scenario, NumberTooLargeForADoubleIsAnInputError) {
  // Found by fuzzing: the JSON library reports this as out_of_range, not as a parse error.
  try {
    parse_scenario(R"({"name": "x", "seed": 1e999})", "big.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("big.json: not valid JSON: "));
    EXPECT_THAT(e.what(), HasSubstr("number overflow parsing '1e999'"));
  }
}

TEST(Locate, StopsAtAStrayCharacterInAnArray) {
  // Found by fuzzing: a '}' or '/' where an array element belongs used to loop forever.
  const auto lines = value_lines("{\"args\": [1, } \"b\": 2}");
  EXPECT_EQ(lines.size(), 4U);  // "", "args", "args[0]", "args[1]"
  EXPECT_EQ(lines.at("args[0]"), 1);
  EXPECT_EQ(lines.at("args[1]"), 1);
  EXPECT_EQ(value_lines("[/]").size(), 2U);
}

// Every key given twice in one object, anywhere, with the lines of both; the same key in two
// objects is no duplicate, and keys inside strings or comments are not keys.
TEST(ScenarioLocate, DuplicateKeysAnywhereWithBothLines) {
  const auto d = duplicate_keys(R"({
  "name": "x", // "name": "in a comment"
  "note": "\"name\": in a string",
  "factors": {"prompt_tokens": [1], "num_ctx": [2]},
  "probes": {"prompt_tokens": 3},
  "variants": [{"name": "a"}, {"name": "b",
                "server": {"args": [], "args": ["x"]}}],
  "name": "y"
})");
  ASSERT_EQ(d.size(), 2U);
  EXPECT_EQ(d[0].path, "variants[1].server.args");
  EXPECT_EQ(d[0].first_line, 7);
  EXPECT_EQ(d[0].second_line, 7);
  EXPECT_EQ(d[1].path, "name");
  EXPECT_EQ(d[1].first_line, 2);
  EXPECT_EQ(d[1].second_line, 8);
  EXPECT_TRUE(duplicate_keys(R"({"a": {"b": 1}, "c": {"b": 2}})").empty());
  EXPECT_TRUE(duplicate_keys(R"({"a": "\u0062", "\u0062": 1, "b": 2})").size() == 1U)
      << "escapes decoded: \\u0062 is b";
}

TEST(Scenario, ProblemsNameTheirLine) {
  try {
    parse_scenario(
        "{\n \"name\": \"x\",\n \"factors\": {\n  \"prompt_tokens\": [1, -4]\n },\n"
        " \"repeats\": \"3\"\n}",
        "f.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("f.json:4: factors.prompt_tokens[1]: -4 is out of range"));
    EXPECT_THAT(e.what(), HasSubstr("f.json:6: repeats: expected an integer"));
  }
}

}  // namespace
}  // namespace kvbench::scenario

namespace kvbench::scenario {
namespace {

TEST(ScenarioConversation, ParsesWithItsDefaultsAndNeedsNoPromptLengths) {
  const auto s = parse_scenario(R"({"name": "c", "conversation": {"turns": 8,
      "conversations": [4, 1, 2], "reuse": ["on", "off"], "slots": 2}})",
                                "c.json");
  const auto& conv = std::get<Conversation>(workloads::of(s));
  EXPECT_EQ(conv.conversations, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(conv.reuse, (std::vector<std::string>{"on", "off"}));
  EXPECT_EQ(conv.system_tokens, 256);
  EXPECT_TRUE(s.factors.prompt_tokens.empty());
  // run.json's scenario parses again to the same.
  const auto again = parse_scenario(to_json(s).dump(), "run.json");
  const auto& conv_again = std::get<Conversation>(workloads::of(again));
  EXPECT_EQ(conv_again.turns, 8);
  EXPECT_EQ(conv_again.slots, 2);
  EXPECT_FALSE(conv_again.concurrent) << "one turn at a time unless asked";
  const auto at_once = parse_scenario(R"({"name": "c", "conversation": {"turns": 2,
      "conversations": 4, "slots": 2, "concurrent": true}})",
                                      "c.json");
  EXPECT_TRUE(std::get<Conversation>(workloads::of(at_once)).concurrent);
  EXPECT_TRUE(
      std::get<Conversation>(workloads::of(parse_scenario(to_json(at_once).dump(), "run.json")))
          .concurrent);
}

TEST(ScenarioConversation, BadFieldsAreNamed) {
  const std::string e = scenario_error(R"({"name": "c", "repeats": 3, "max_tokens": 8,
      "conversation": {"turns": 4, "reuse": ["on", "maybe"],
                       "conversations": [2, 2], "think_time_s": -1, "turn": 3,
                       "concurrent": "yes"}})");
  EXPECT_THAT(e, HasSubstr("conversation.reuse[1]: 'maybe'"));
  EXPECT_THAT(e, HasSubstr("conversation.conversations[1]: 2 is listed twice"));
  EXPECT_THAT(e, HasSubstr("conversation.think_time_s: expected a number of seconds"));
  EXPECT_THAT(e, HasSubstr("conversation.turn: unknown key (did you mean 'turns'?)"));
  EXPECT_THAT(e, HasSubstr("conversation.concurrent: expected true (a set's conversations in "
                           "flight at once) or false"));
  EXPECT_THAT(e, HasSubstr("repeats: a conversation repeats by its turns"));
  EXPECT_THAT(e, HasSubstr("max_tokens: a conversation's answers are conversation.answer_tokens"));
}

TEST(ScenarioConversation, RefusesWhatItCannotBeCombinedWith) {
  const std::string e = scenario_error(R"({"name": "c",
      "factors": {"prompt_tokens": [256], "num_ctx": [1024]},
      "concurrency": {"streams": 2}, "probes": {"every": 2},
      "server": {"kind": "openai", "url": "http://127.0.0.1:9/v1", "endpoint": "completions",
                 "model": "m"},
      "conversation": {"turns": 40, "user_tokens": 100}})");
  EXPECT_THAT(e, HasSubstr("factors.prompt_tokens: a conversation sizes its prompts"));
  EXPECT_THAT(e, HasSubstr("concurrency: conversations set their own concurrency: remove "
                           "concurrency, and put \"concurrent\": true in the conversation"));
  EXPECT_THAT(e, HasSubstr("probes: a conversation run has no drift probes"));
  EXPECT_THAT(e, HasSubstr("server.endpoint: a conversation is sent as chat messages"));
  EXPECT_THAT(e, HasSubstr("conversation.turns: 40 turns of 100 user and 32 answer tokens"));
}

TEST(ScenarioWorkload, TheWorkloadKeyNamesExactlyOneWorkload) {
  // "workload": {"conversation": ...} and the top-level "conversation" are the same scenario, down
  // to what run.json records (and so its hash).
  const auto nested = parse_scenario(R"({"name": "c", "workload": {"conversation": {"turns": 3,
      "conversations": 2}}})",
                                     "c.json");
  const auto top = parse_scenario(R"({"name": "c", "conversation": {"turns": 3,
      "conversations": 2}})",
                                  "c.json");
  EXPECT_EQ(std::get<Conversation>(workloads::of(nested)).turns, 3);
  EXPECT_EQ(to_json(nested), to_json(top));
  // The sweep is the default, and may be named.
  const auto sweep = parse_scenario(R"({"name": "s", "workload": {"sweep": {}},
      "factors": {"prompt_tokens": [64]}})",
                                    "s.json");
  EXPECT_TRUE(std::holds_alternative<Sweep>(workloads::of(sweep)));
  EXPECT_EQ(to_json(sweep), to_json(parse_scenario(R"({"name": "s",
      "factors": {"prompt_tokens": [64]}})",
                                                   "s.json")));

  EXPECT_THAT(scenario_error(R"({"name": "c", "workload": {"conversation": {"turns": 2},
      "sweep": {}}})"),
              HasSubstr("workload: expected an object with exactly one of sweep, conversation"));
  EXPECT_THAT(scenario_error(R"({"name": "c", "workload": {"conversaton": {"turns": 2}}})"),
              HasSubstr("workload.conversaton: unknown key (did you mean 'conversation'?)"));
  EXPECT_THAT(scenario_error(R"({"name": "c", "workload": {"conversation": {"turns": 2}},
      "conversation": {"turns": 2}})"),
              HasSubstr("conversation: give the workload once"));
  EXPECT_THAT(scenario_error(R"({"name": "s", "workload": {"sweep": {"rounds": 2}},
      "factors": {"prompt_tokens": [64]}})"),
              HasSubstr("workload.sweep.rounds: unknown key"));
  // Its own fields are named where they were given.
  const std::string e = scenario_error(R"({"name": "c", "workload": {"conversation": {"turns": 0,
      "slots": 2}}, "server": {"kind": "ollama", "url": "http://127.0.0.1:9", "model": "m"}})");
  EXPECT_THAT(e, HasSubstr("workload.conversation.turns: 0 is out of range"));
}

TEST(ScenarioWorkload, EachPartDeclaresTheWorkloadsItComposesWith) {
  // The sweep requires its prompt lengths; a conversation refuses them, named where given.
  EXPECT_THAT(scenario_error(R"({"name": "s"})"),
              HasSubstr("factors: missing: give at least factors.prompt_tokens"));
  EXPECT_THAT(scenario_error(R"({"name": "s", "factors": {"num_ctx": [1024]}})"),
              HasSubstr("factors.prompt_tokens: missing: give the prompt lengths in tokens"));
  const std::string e = scenario_error(R"({"name": "c", "workload": {"conversation": {"turns": 2}},
      "repeats": 2, "precision": {"metric": "ttft_ms", "half_width": 0.05, "max_calls": 90},
      "answers": {"prompts": 2}, "unique_first_line": false,
      "factors": {"edit_position": [0.5], "num_ctx": [4096]}})");
  EXPECT_THAT(e, HasSubstr("repeats: a conversation repeats by its turns"));
  EXPECT_THAT(e, HasSubstr("precision: precision on demand fits single prompts"));
  EXPECT_THAT(e, HasSubstr("answers: the answers experiment and a conversation"));
  EXPECT_THAT(e, HasSubstr("unique_first_line: every conversation starts with its own"));
  EXPECT_THAT(e, HasSubstr("factors.edit_position: the edit-position experiment and a "
                           "conversation"));
  // What a part accepts passes: the same parts with the sweep.
  EXPECT_NO_THROW(parse_scenario(R"({"name": "s", "repeats": 2, "answers": {"prompts": 2},
      "factors": {"prompt_tokens": [256], "edit_position": [0.5], "num_ctx": [4096],
                  "cache_type": ["f16", "q8_0"]}})",
                                 "s.json"));
}

TEST(ScenarioConversation, VariantsCompareServersUnderTheSameConversations) {
  const auto s = parse_scenario(R"({"name": "c", "conversation": {"turns": 4, "conversations": 4,
      "slots": 2}, "variants": [{"name": "host-cache"},
      {"name": "no-host-cache", "server": {"args": ["--cache-ram", "0"]}}]})",
                                "c.json");
  EXPECT_EQ(s.variants.size(), 2U);
  EXPECT_TRUE(std::holds_alternative<Conversation>(workloads::of(s)));
}

}  // namespace
}  // namespace kvbench::scenario
