// A trace as a scenario's workload: read, chosen and scaled when the scenario is parsed, a bad
// trace a bad scenario (exit 2, the file's line named under workload.trace.file), and what it
// does not compose with refused by name.

#include <filesystem>
#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/scenario_workload.h"

namespace kvbench::scenario {
namespace {

using ::testing::HasSubstr;

// A scenario "file" beside the test traces, so that a relative trace path resolves there.
const std::string kSource = std::string(KVBENCH_TEST_DATA) + "/traces/scenario.json";

std::string scenario_with_trace(const std::string& trace, const std::string& rest = "") {
  return R"({"name": "t", "factors": {"num_ctx": [8192]}, "workload": {"trace": )" + trace + "}" +
         rest + "}";
}

std::string trace_error_of(const std::string& text) {
  try {
    parse_scenario(text, kSource);
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

TEST(TraceWorkload, TheIssuesSpellingReadsChoosesAndScales) {
  const auto s = parse_scenario(
      scenario_with_trace(R"({"file": "mooncake-conversation.jsonl.xz", "format": "mooncake",
        "window": {"first": 0, "count": 200}, "sample": {"families": 20, "seed": 1},
        "scale": {"tokens": 0.0625, "time": 10}, "timing": "schedule", "concurrency": 1})"),
      kSource);
  const auto& t = std::get<workloads::TraceReplay>(workloads::of(s));
  ASSERT_TRUE(t.requests);
  EXPECT_EQ(t.requests->block_tokens, 32);  // 512 x 0.0625
  EXPECT_FALSE(t.requests->requests.empty());
  EXPECT_LT(t.requests->requests.size(), 200u);
  EXPECT_EQ(t.whole->requests.size(), 12031u);
  EXPECT_TRUE(std::filesystem::path(t.path).is_absolute());
  // run.json records the file where it was read: a resumed run reads the same requests.
  const auto again = parse_scenario(s.resolved.dump(), "/elsewhere/run.json");
  const auto& u = std::get<workloads::TraceReplay>(workloads::of(again));
  EXPECT_EQ(u.requests->requests.size(), t.requests->requests.size());
  EXPECT_EQ(to_json(again), s.resolved);
}

TEST(TraceWorkload, DefaultsAreTheWholeTraceUnscaledOnASchedule) {
  const auto s = parse_scenario(scenario_with_trace(R"({"file": "bailian-fixture.jsonl",
      "format": "bailian"})"),
                                kSource);
  const auto& t = std::get<workloads::TraceReplay>(workloads::of(s));
  EXPECT_EQ(t.requests->requests.size(), t.whole->requests.size());
  EXPECT_FALSE(t.closed);
  EXPECT_EQ(t.concurrency, 1);
  EXPECT_EQ(t.slots, 1);
}

TEST(TraceWorkload, ABadTraceIsABadScenarioNamingItsLine) {
  const auto dir = std::filesystem::temp_directory_path() / "kvbench-trace-workload-test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "bad.jsonl");
    out << R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]})"
        << "\n"
        << R"({"timestamp": 5, "input_length": 600, "output_length": 5, "hash_ids": [1]})"
        << "\n";
  }
  std::string e;
  try {
    parse_scenario(scenario_with_trace(R"({"file": "bad.jsonl"})"), (dir / "s.json").string());
  } catch (const InputError& err) {
    e = err.what();
  }
  EXPECT_THAT(e, HasSubstr("workload.trace.file"));
  EXPECT_THAT(e, HasSubstr("line 2"));
  EXPECT_THAT(trace_error_of(scenario_with_trace(R"({"file": "missing.jsonl"})")),
              HasSubstr("workload.trace.file"));
  std::filesystem::remove_all(dir);
}

TEST(TraceWorkload, ARecordedRunReadsWithoutItsFileButDoesNotReplay) {
  const auto s = parse_scenario(
      scenario_with_trace(R"({"file": "bailian-fixture.jsonl", "format": "bailian"})"), kSource);
  const std::string moved = std::regex_replace(
      s.resolved.dump(), std::regex("bailian-fixture\\.jsonl"), "moved-away.jsonl");
  const auto recorded = parse_scenario(moved, "/elsewhere/run.json");
  const auto& t = std::get<workloads::TraceReplay>(workloads::of(recorded));
  EXPECT_FALSE(t.requests);
  EXPECT_THAT(t.unread, HasSubstr("moved-away.jsonl"));
  // What run.json recorded of the whole trace is kept, so the scenario's hash does not change.
  EXPECT_EQ(to_json(recorded)["workload"]["trace"]["whole_trace"],
            s.resolved["workload"]["trace"]["whole_trace"]);
  // A scenario as a user writes it (no whole_trace) still fails on a missing file.
  EXPECT_THAT(trace_error_of(scenario_with_trace(R"({"file": "moved-away.jsonl"})")),
              HasSubstr("workload.trace.file"));
}

TEST(TraceWorkload, ItsSettingsAreCheckedByName) {
  const std::string e =
      trace_error_of(scenario_with_trace(R"({"file": "mooncake-conversation.jsonl.xz",
      "format": "sharegpt", "timing": "open", "concurrency": 0, "scale": {"tokens": 0},
      "sample": {"seed": 3}, "windows": {}})"));
  EXPECT_THAT(e, HasSubstr("workload.trace.format: 'sharegpt': expected \"mooncake\""));
  EXPECT_THAT(e, HasSubstr("workload.trace.timing: 'open': expected \"schedule\""));
  EXPECT_THAT(e, HasSubstr("workload.trace.concurrency: 0 is out of range"));
  EXPECT_THAT(e, HasSubstr("workload.trace.scale.tokens: expected a factor"));
  EXPECT_THAT(e, HasSubstr("workload.trace.sample.families: missing"));
  EXPECT_THAT(e, HasSubstr("workload.trace.windows: unknown key (did you mean 'window'?)"));
  EXPECT_THAT(trace_error_of(scenario_with_trace(R"({"format": "mooncake"})")),
              HasSubstr("workload.trace.file: missing"));
  EXPECT_THAT(trace_error_of(scenario_with_trace(R"({"file": "mooncake-conversation.jsonl.xz",
      "sample": {"families": 100000}})")),
              HasSubstr("families"));
}

TEST(TraceWorkload, WhatATraceDoesNotComposeWithIsRefused) {
  const std::string trace = R"({"file": "bailian-fixture.jsonl", "format": "bailian"})";
  EXPECT_THAT(trace_error_of(R"({"name": "t", "factors": {"num_ctx": [8192], "prompt_tokens": [64]},
      "workload": {"trace": )" +
                             trace + "}}"),
              HasSubstr("a trace's requests give the prompt lengths"));
  EXPECT_THAT(trace_error_of(scenario_with_trace(trace, R"(, "repeats": 3)")),
              HasSubstr("repeats: a trace is replayed whole"));
  EXPECT_THAT(trace_error_of(scenario_with_trace(trace, R"(, "concurrency": {"streams": 2})")),
              HasSubstr("a trace sets its own concurrency"));
  EXPECT_THAT(
      trace_error_of(scenario_with_trace(trace, R"(, "server": {"kind": "ollama", "model": "m"})")),
      HasSubstr("Ollama has no tokenizer endpoint"));
  EXPECT_THAT(trace_error_of(scenario_with_trace(R"({"file": "bailian-fixture.jsonl",
      "format": "bailian", "capacity_blocks": 100})")),
              HasSubstr("capacity_blocks: a block pool's size is for an attached"));
  EXPECT_THAT(trace_error_of(scenario_with_trace(R"({"file": "bailian-fixture.jsonl",
      "format": "bailian", "concurrency": 2})")),
              HasSubstr("concurrency: 2 requests in flight over 1 slot"));
  EXPECT_THAT(trace_error_of(R"({"name": "t", "factors": {"num_ctx": [256]},
      "workload": {"trace": {"file": "mooncake-conversation.jsonl.xz"}}})"),
              HasSubstr("more than num_ctx 256"));
}

}  // namespace
}  // namespace kvbench::scenario
