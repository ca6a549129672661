// `kvbench capacity` on the real llama-server: a bounded search over 1, 2, 4 conversations, each
// level a run folder of its own with every call recorded, and the answer beside the KV arithmetic.

#include <algorithm>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;

std::string np_of(const nlohmann::json& argv) {
  const auto np = std::find(argv.begin(), argv.end(), "-np");
  return np == argv.end() ? "1" : (np + 1)->get<std::string>();
}

TEST(Capacity, SearchesUpToMaxAndKeepsEveryLevelsRecords) {
  const fs::path dir = fresh_dir("capacity");
  const auto r = run_kvbench({"capacity",
                              "--model",
                              "synthetic:tiny",
                              "--ctx",
                              "256",
                              "--cache-type",
                              "f16",
                              "--prompt-tokens",
                              "32",
                              "--max-tokens",
                              "4",
                              "--ttft-p90-ms",
                              "5000",
                              "--max",
                              "4",
                              "--rounds",
                              "2",
                              "--results",
                              (dir / "results").string(),
                              "-q",
                              "--server-bin",
                              llama_server_path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path cap_dir = only_run_dir(dir / "results");
  const auto cap = read_json(cap_dir / "capacity.json");
  EXPECT_EQ(cap["status"], "complete");
  // `kvbench report` on the capacity folder: --json - is its summary alone on stdout; the tables
  // of a run folder are refused rather than ignored.
  const auto as_json = run_kvbench({"report", cap_dir.string(), "--json", "-"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(nlohmann::json::parse(as_json.out), cap);
  const auto as_csv = run_kvbench({"report", cap_dir.string(), "--csv", (dir / "c.csv").string()});
  EXPECT_EQ(as_csv.exit_code, 2);
  EXPECT_THAT(as_csv.err, ::testing::HasSubstr("a capacity folder has no per-condition"));
  EXPECT_FALSE(fs::exists(dir / "c.csv"));
  const int answer = cap["answer"].get<int>();
  EXPECT_GE(answer, 0);
  EXPECT_LE(answer, 4);
  const auto& levels = cap["levels"];
  ASSERT_GE(levels.size(), 1U);
  EXPECT_EQ(levels[0]["level"], 1);
  bool answer_passed = answer == 0;
  for (const auto& level : levels) {
    const int n = level["level"].get<int>();
    const fs::path run_dir = cap_dir / level["run_dir"].get<std::string>();
    const auto run = read_json(run_dir / "run.json");
    EXPECT_EQ(np_of(run["blocks"][0]["argv"]), std::to_string(n));
    const auto calls = read_calls(run_dir);
    EXPECT_EQ(calls.size(), static_cast<std::size_t>(2 * n + 1)) << "level " << n;
    const auto timed = std::count_if(calls.begin(), calls.end(), [](const auto& c) {
      return c.kind == kvbench::CallKind::timed;
    });
    EXPECT_EQ(timed, 2 * n);
    EXPECT_EQ(level["concurrency"]["calls"], 2 * n);
    answer_passed = answer_passed || (n == answer && level["passed"].get<bool>());
    if (answer < 4 && n == answer + 1 && !level.contains("replicate")) {
      EXPECT_FALSE(level["passed"].get<bool>()) << "the level above the answer failed";
    }
  }
  EXPECT_TRUE(answer_passed) << cap.dump(2);
  // One replicate of the levels that decided the answer, pooled into the boundary's fit.
  const auto replicates = std::count_if(levels.begin(), levels.end(),
                                        [](const auto& l) { return l.contains("replicate"); });
  EXPECT_EQ(replicates, (answer >= 1 ? 1 : 0) + (answer < 4 ? 1 : 0));
  ASSERT_TRUE(cap.contains("boundary")) << cap.dump(2);
  EXPECT_FALSE(cap["boundary"]["levels"].empty());
  if (answer == 4) {
    EXPECT_EQ(cap["boundary"]["position"], "above the measured levels");
  }
  EXPECT_TRUE(fs::exists(cap_dir / "capacity.md"));
  EXPECT_THAT(r.out, testing::HasSubstr("## Capacity"));
  EXPECT_THAT(r.out,
              testing::ContainsRegex("KV arithmetic: [0-9]+ conversations? of 256 tokens need "
                                     "[0-9.]+ MiB of KV cache at f16 with this model"));
  EXPECT_THAT(r.out, testing::HasSubstr("capacity-n1"));
}

// The same search through the Anthropic-style /v1/messages of a managed llama-server: each level's
// concurrent calls are pinned to their slots, so each carries its cache proof. With one slot the
// reuse is exactly the prediction; with more, llama-server's host-RAM prompt cache may bring
// another slot's prompt start into an empty slot, which the proof reports as unexpected reuse,
// never as a read past the unique first line.
TEST(Capacity, SearchesThroughTheMessagesApiWithEveryCallProven) {
  const fs::path dir = fresh_dir("capacity-anthropic");
  const auto r = run_kvbench({"capacity",
                              "--kind",
                              "anthropic",
                              "--model",
                              "synthetic:tiny",
                              "--ctx",
                              "256",
                              "--prompt-tokens",
                              "32",
                              "--max-tokens",
                              "4",
                              "--ttft-p90-ms",
                              "5000",
                              "--max",
                              "2",
                              "--rounds",
                              "1",
                              "--replicates",
                              "0",
                              "--results",
                              (dir / "results").string(),
                              "-q",
                              "--server-bin",
                              llama_server_path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path cap_dir = only_run_dir(dir / "results");
  const auto cap = read_json(cap_dir / "capacity.json");
  EXPECT_EQ(cap["request"]["kind"], "anthropic");
  ASSERT_GE(cap["levels"].size(), 1U);
  for (const auto& level : cap["levels"]) {
    const fs::path run_dir = cap_dir / level["run_dir"].get<std::string>();
    EXPECT_EQ(read_json(run_dir / "run.json")["server"]["kind"], "anthropic");
    for (const auto& c : read_calls(run_dir)) {
      ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
      ASSERT_TRUE(c.server.cache_n && c.expected_cache_n) << c.seq;
      const auto has = [&](const char* f) {
        return std::find(c.flags.begin(), c.flags.end(), f) != c.flags.end();
      };
      EXPECT_FALSE(has("prompt_cache_hit")) << run_dir << " seq " << c.seq;
      if (level["level"] == 1) {
        EXPECT_EQ(*c.server.cache_n, *c.expected_cache_n) << "seq " << c.seq;
      } else if (*c.server.cache_n != *c.expected_cache_n) {
        EXPECT_TRUE(has("unexpected_cache_reuse")) << run_dir << " seq " << c.seq;
      }
    }
  }
}

TEST(Capacity, APromptThatDoesNotFitIsBadInputAndCreatesNothing) {
  const fs::path dir = fresh_dir("capacity-bad");
  const auto r = run_kvbench({"capacity", "--model", "synthetic:tiny", "--ctx", "256",
                              "--prompt-tokens", "300", "--results", (dir / "results").string(),
                              "--server-bin", llama_server_path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, testing::HasSubstr("--prompt-tokens: 300 prompt tokens and 16 generated do "
                                        "not fit a context of 256 (--ctx)"));
  EXPECT_FALSE(fs::exists(dir / "results"));

  // tiny's heads hold 16 numbers; q8_0 stores blocks of 32: found at the first level's setup.
  const auto q8 = run_kvbench({"capacity", "--model", "synthetic:tiny", "--ctx", "256",
                               "--prompt-tokens", "32", "--cache-type", "q8_0", "--results",
                               (dir / "results").string(), "--server-bin", llama_server_path()});
  EXPECT_EQ(q8.exit_code, 2);
  EXPECT_THAT(q8.err, testing::HasSubstr("'q8_0' stores blocks of 32 numbers"));
  EXPECT_FALSE(fs::exists(dir / "results"));
}

}  // namespace
}  // namespace kvbench::itest
