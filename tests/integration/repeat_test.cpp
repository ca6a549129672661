// `kvbench repeat` on the real llama-server: a scenario run N times, each run a folder of its own
// with a server of its own, and each headline effect over the runs; reading the same folders back
// (--runs) gives the same answer.

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;

TEST(RepeatOnServer, RunsTheScenarioNTimesAndGivesEachEffectOverTheRuns) {
  const fs::path dir = fresh_dir("repeat");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "repeat-small",
    "server": {"model": "synthetic:small", "threads": 1},
    "factors": {"prompt_tokens": [128, 512]}, "repeats": 4, "max_tokens": 8, "seed": 3})");
  const fs::path results = dir / "results";
  const auto r =
      run_kvbench({"repeat", "3", scenario, "--results", results.string(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "kvbench.repeat");
  EXPECT_EQ(j.at("scenario"), "repeat-small");
  ASSERT_EQ(j.at("runs").size(), 3U);
  std::set<std::string> servers;
  std::vector<nlohmann::json> summaries;
  for (const auto& run_dir : j.at("runs")) {
    const fs::path d = run_dir.get<std::string>();
    EXPECT_EQ(read_json(d / "run.json").at("status"), "complete") << d;
    servers.insert(read_json(d / "run.json").at("blocks").at(0).at("url").get<std::string>() +
                   std::to_string(read_json(d / "run.json").at("blocks").at(0).value("pid", 0)));
    summaries.push_back(read_json(d / "summary.json"));
  }
  // Each run started a server of its own (a managed server per run).
  EXPECT_EQ(servers.size(), 3U);
  // TTFT's relative prompt effect: judged, in every run, each run's estimate as its summary has it.
  bool found = false;
  for (const auto& e : j.at("effects")) {
    if (e.at("metric") != "ttft_ms" || e.at("term") != "prompt_ktokens" || !e.at("relative")) {
      continue;
    }
    found = true;
    EXPECT_TRUE(e.at("judged").get<bool>());
    EXPECT_EQ(e.at("runs"), 3);
    ASSERT_EQ(e.at("estimates").size(), 3U);
    for (std::size_t i = 0; i < 3; ++i) {
      double in_summary = 0;
      for (const auto& s : summaries[i].at("analysis").at("effects")) {
        if (s.at("metric") == "ttft_ms" && s.at("term") == "prompt_ktokens" &&
            s.at("relative").get<bool>()) {
          in_summary = s.at("estimate").get<double>();
        }
      }
      EXPECT_DOUBLE_EQ(e.at("estimates")[i].get<double>(), in_summary);
    }
    EXPECT_GT(e.at("mean").get<double>(), 0) << "longer prompts take longer";
    EXPECT_LE(e.at("ci").at("lower").get<double>(), e.at("mean").get<double>());
  }
  EXPECT_TRUE(found) << r.out;
  std::vector<std::string> args{"repeat", "--runs"};
  for (const auto& run_dir : j.at("runs")) {
    args.push_back(run_dir.get<std::string>());
  }
  args.insert(args.end(), {"--format", "json"});
  const auto again = run_kvbench(args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out), j);
}

// One server start per run: `repeat --history` stores each one-start effect's run-to-run
// component for this machine class, server build and model; a later run given the history
// (--history, or KVBENCH_HISTORY) records it in run.json and its one-start effects add it and
// claim the machine; without it they cover this start only.
TEST(RepeatOnServer, StoresTheStartToStartComponentThatALaterRunBorrows) {
  const fs::path dir = fresh_dir("repeat-tau");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "repeat-tau",
    "server": {"model": "synthetic:tiny", "threads": 1},
    "factors": {"prompt_tokens": [64, 256]}, "repeats": 3, "max_tokens": 8, "seed": 5})");
  const std::string history = (dir / "h.sqlite").string();
  const auto r = run_kvbench({"repeat", "3", scenario, "--results", (dir / "r").string(),
                              "--history", history, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("start-to-start: stored"));
  for (const auto& e : nlohmann::json::parse(r.out).at("effects")) {
    EXPECT_EQ(e.at("covers"), "this_start") << e.dump();
  }

  const auto find_slope = [](const fs::path& run_dir) {
    const auto summary = read_json(run_dir / "summary.json");
    for (const auto& e : summary.at("analysis").at("effects")) {
      if (e.at("metric") == "ttft_ms" && e.at("term") == "prompt_ktokens" &&
          e.at("relative").get<bool>()) {
        return e;
      }
    }
    return nlohmann::json();
  };
  const auto alone = run_kvbench({"run", scenario, "--results", (dir / "alone").string(), "-q"});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const auto alone_dir = only_run_dir(dir / "alone");
  EXPECT_FALSE(read_json(alone_dir / "run.json").contains("start_tau"));
  EXPECT_EQ(find_slope(alone_dir).at("covers"), "this_start");
  EXPECT_THAT(alone.out, ::testing::HasSubstr("cover this server start only"));

  const auto lent = run_kvbench({"run", scenario, "--results", (dir / "lent").string(), "-q"}, 600,
                                {{"KVBENCH_HISTORY", history}});
  ASSERT_EQ(lent.exit_code, 0) << lent.err;
  const auto lent_dir = only_run_dir(dir / "lent");
  const auto taus = read_json(lent_dir / "run.json").at("start_tau");
  ASSERT_FALSE(taus.empty());
  EXPECT_EQ(taus.at(0).at("df"), 2.0) << "three runs";
  const auto slope = find_slope(lent_dir);
  EXPECT_EQ(slope.at("covers"), "machine") << slope.dump();
  ASSERT_TRUE(slope.contains("start_tau")) << slope.dump();
  EXPECT_EQ(slope.at("start_tau").at("runs"), 3);
  EXPECT_THAT(lent.out, ::testing::HasSubstr("measured here before"));
  // The report reads the component from run.json alone: the same without the history.
  const auto again = run_kvbench({"report", lent_dir.string(), "--format", "json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  bool same = false;
  const auto reported = nlohmann::json::parse(again.out);
  for (const auto& e : reported.at("analysis").at("effects")) {
    same = same || (e == slope);
  }
  EXPECT_TRUE(same);
}

TEST(RepeatOnServer, RefusesFewerThanTwoRunsBeforeStartingAnything) {
  const fs::path dir = fresh_dir("repeat-one");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "one",
    "server": {"model": "synthetic:small"}, "factors": {"prompt_tokens": [128]}})");
  const auto r = run_kvbench({"repeat", "1", scenario, "--results", (dir / "results").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::HasSubstr("N: expected 2 to 1000 runs, got 1"));
  EXPECT_FALSE(fs::exists(dir / "results"));
}

}  // namespace
}  // namespace kvbench::itest
