// kvbench gate and kvbench history on run folders written here from simulated records (no
// server): exit codes 0/1/3/2 and the JUnit, Markdown and JSON files.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/text.h"
#include "simulated_run.h"

namespace kvbench::gate {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class GateCli : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() /
                  fmt::format("kvbench-gate-cli-{}-{}", ::getpid(),
                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A run folder of simulated records; the scenario is quickstart's (variants come from records).
  fs::path write_run(const std::string& name, const sim::RunShape& shape, std::uint64_t seed) {
    const fs::path run = dir_ / name;
    fs::create_directories(run);
    const nlohmann::json scenario = nlohmann::json::parse(R"({
      "name": "gate-demo", "server": {"kind": "llama-server", "model": "synthetic:small"},
      "factors": {"prompt_tokens": [256, 1024, 2048], "num_ctx": [4096], "cache_type": ["f16"]},
      "repeats": 5, "seed": 42})");
    const nlohmann::json run_json = {
        {"run_id", name},
        {"started", "2026-01-01T00:00:00Z"},
        {"scenario_hash", fmt::format("fnv1a64:{:016x}", fnv1a64(scenario.dump()))},
        {"scenario", scenario},
        {"status", "complete"},
        {"kvbench", {{"git_revision", "abc"}}},
        {"machine",
         {{"hostname", "h"},
          {"cpu_model", "c"},
          {"logical_cores", 2},
          {"total_memory_bytes", 1 << 30}}},
        {"labels", {{"host", "ci-7"}, {"run", name}}}};
    std::ofstream(run / "run.json") << run_json.dump(2);
    std::ofstream calls(run / "calls.jsonl");
    for (auto r : sim::simulate_run(shape, seed)) {
      r.run_id = name;
      calls << to_json(r).dump() << "\n";
    }
    return run;
  }

  int kvbench(const std::string& args, const std::string& env = "") {
    const std::string cmd = env + " " + KVBENCH_BINARY + " " + args + " >" +
                            (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    out_ = slurp(dir_ / "out");
    err_ = slurp(dir_ / "err");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string out_;
  std::string err_;
};

sim::RunShape quiet() {
  sim::RunShape s;
  s.decode_cv = 0.02;
  s.ttft_cv = 0.03;
  return s;
}

TEST_F(GateCli, IdenticalVariantsPassAndWriteEveryOutput) {
  const auto run = write_run("aa", quiet(), 1);
  const auto summary = dir_ / "summary.md";
  EXPECT_EQ(kvbench("gate --run " + run.string(), "GITHUB_STEP_SUMMARY=" + summary.string()), 0)
      << out_ << err_;
  EXPECT_NE(out_.find("PASS decode_tps cand vs base (all calls): change "), std::string::npos);
  EXPECT_NE(out_.find("PASS ttft_ms cand vs base (all calls)"), std::string::npos);
  EXPECT_NE(out_.find("gate: PASS"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(run / "gate.json"));
  EXPECT_EQ(j["overall"], "PASS");
  EXPECT_EQ(j["details"]["gate"]["entries"].size(), 2u);
  EXPECT_EQ(j["details"]["gate"]["entries"][0]["margin"], 0.05);
  EXPECT_NE(slurp(run / "gate.junit.xml").find("tests=\"2\" failures=\"0\""), std::string::npos);
  EXPECT_EQ(slurp(summary), slurp(run / "gate.md"));
}

TEST_F(GateCli, SlowerCandidateFailsWithExitOne) {
  auto shape = quiet();
  shape.decode_ratio["cand"] = 0.8;
  const auto run = write_run("slow", shape, 2);
  const auto junit = dir_ / "elsewhere.xml";
  EXPECT_EQ(kvbench("gate --run " + run.string() + " --junit " + junit.string()), 1) << err_;
  EXPECT_NE(out_.find("FAIL decode_tps cand vs base (all calls): change -2"), std::string::npos)
      << out_;
  EXPECT_NE(slurp(junit).find("<failure type=\"failed\""), std::string::npos);
  EXPECT_FALSE(fs::exists(run / "gate.junit.xml"));
}

TEST_F(GateCli, UndecidedGateExitsThreeOrWarns) {
  auto shape = quiet();
  shape.decode_cv = 0.04;
  shape.decode_ratio["cand"] = 1 / 1.05;
  const auto run = write_run("margin", shape, 14);
  EXPECT_EQ(kvbench("gate --run " + run.string()), 3) << out_;
  EXPECT_NE(out_.find("gate: INCONCLUSIVE (fails the gate)"), std::string::npos);
  EXPECT_EQ(kvbench("gate --run " + run.string() + " --on-inconclusive warn"), 0);
  EXPECT_NE(slurp(run / "gate.junit.xml").find("<skipped"), std::string::npos);
  // A wider margin decides it.
  EXPECT_EQ(kvbench("gate --run " + run.string() + " --margin decode_tps=0.15"), 0) << out_;
}

TEST_F(GateCli, BadInputExitsTwo) {
  const auto run = write_run("aa", quiet(), 3);
  EXPECT_EQ(kvbench("gate --run " + run.string() + " --margin decode_tps"), 2);
  EXPECT_NE(err_.find("--margin decode_tps: expected METRIC=FRACTION"), std::string::npos);
  EXPECT_EQ(kvbench("gate --run " + run.string() + " --margin speed=0.1"), 2);
  EXPECT_NE(err_.find("unknown metric 'speed'"), std::string::npos) << err_;
  EXPECT_EQ(kvbench("gate --baseline " + run.string() + " --candidate " + run.string()), 2);
  EXPECT_NE(err_.find("interleaved variants"), std::string::npos);
  auto one = quiet();
  one.variants = {"only"};
  EXPECT_EQ(kvbench("gate --run " + write_run("one", one, 4).string()), 2);
  EXPECT_NE(err_.find("variants:"), std::string::npos);
  EXPECT_EQ(kvbench("gate --run " + (dir_ / "none").string()), 2);
}

TEST_F(GateCli, HistoryGatesANewSessionAgainstEarlierOnes) {
  sim::RunShape single = quiet();
  single.variants = {""};
  const auto db = (dir_ / "history.sqlite").string();
  EXPECT_EQ(kvbench("history add " + db + " " + write_run("first", single, 100).string()), 0);
  EXPECT_EQ(kvbench("gate --history " + db + " --run " + write_run("few", single, 200).string()), 3)
      << out_ << err_;
  EXPECT_NE(out_.find("1 earlier sessions in the history, 10 needed"), std::string::npos) << out_;
  for (int i = 1; i < 12; ++i) {
    const auto run = write_run(fmt::format("s{}", i), single, 100 + static_cast<unsigned>(i));
    ASSERT_EQ(kvbench(fmt::format("history add {} {} --label build{}", db, run.string(), i)), 0)
        << err_;
  }
  EXPECT_EQ(kvbench("history list " + db), 0);
  EXPECT_NE(out_.find("s11"), std::string::npos);
  EXPECT_EQ(kvbench("history show " + db + " --metric decode_tps"), 0);
  EXPECT_EQ(std::count(out_.begin(), out_.end(), '\n'), 14);  // header, rule and 12 sessions
  EXPECT_EQ(kvbench("history show " + db + " --metric decode_tps --format tsv"), 0);
  EXPECT_EQ(std::count(out_.begin(), out_.end(), '\n'), 13);  // header and 12 sessions
  EXPECT_EQ(
      out_.substr(0, out_.find('\n')),
      "session\trun_id\trecorded_at\thost_class\tmetric\tcondition\tvariant\tvalue\tx_ref\tn");
  EXPECT_EQ(kvbench("history list " + db + " --format json"), 0);
  const auto sessions = nlohmann::json::parse(out_);
  ASSERT_EQ(sessions.size(), 12U);
  EXPECT_EQ(sessions[11]["label"], "build11");
  EXPECT_EQ(sessions[11]["run_labels"], "host=ci-7, run=s11") << "the run's own --label";
  EXPECT_TRUE(sessions[0]["session"].is_number_integer());
  EXPECT_EQ(kvbench("gate --history " + db + " --run " + write_run("same", single, 300).string()),
            0)
      << out_;
  auto slow = single;
  slow.decode_ratio[""] = 0.8;
  const auto slow_run = write_run("slower", slow, 400);
  EXPECT_EQ(kvbench("gate --history " + db + " --run " + slow_run.string()), 1) << out_;
  EXPECT_NE(out_.find("FAIL decode_tps run slower vs history (all calls)"), std::string::npos)
      << out_;
  EXPECT_EQ(kvbench("gate --history " + db + " --run " + slow_run.string() + " --format json"), 1);
  const auto verdict = nlohmann::json::parse(out_);  // stdout is the JSON alone
  EXPECT_EQ(verdict["schema"], "kvbench.gate");
  EXPECT_EQ(verdict["overall"], "FAIL");
  EXPECT_EQ(verdict["exit_code"], 1);
  EXPECT_EQ(kvbench("gate --history " + db + " --baseline " +
                    write_run("base2", single, 500).string() + " --candidate " + slow_run.string()),
            1)
      << out_;
}

TEST_F(GateCli, EmptyHistoryIsAClearError) {
  const auto run = write_run("aa", quiet(), 5);
  EXPECT_EQ(
      kvbench("gate --history " + (dir_ / "missing.sqlite").string() + " --run " + run.string()),
      2);
  EXPECT_NE(err_.find("kvbench history add"), std::string::npos) << err_;
}

}  // namespace
}  // namespace kvbench::gate
