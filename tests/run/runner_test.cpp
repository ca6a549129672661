// The runner on a fake server kind, a fake clock and scripted transports: what it records for each
// call kind, pairs, flags, restarts and their bound, a block whose server does not start, resume
// and extend, and concurrent blocks, with no server and no network.

#include "harness/run/runner.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/plan/plan.h"
#include "harness/precision/precision.h"
#include "harness/results/results.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/conversation/record.h"
#include "harness/workloads/conversation/report.h"
#include "harness/workloads/scenario_workload.h"
#include "tests/support/fake_server.h"
#include "tests/support/scripted_transport.h"

namespace kvbench::run {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
// The run as the commands run it: continued until precise where the scenario asks.
using precision::extend_run;
using precision::resume_run;
using precision::run_scenario;
using test_support::FakeScript;
using test_support::FakeServers;
using test_support::ScriptedConcurrentTransport;
using test_support::ScriptedTransport;

constexpr auto kSequential = R"({
  "name": "fake", "server": {"kind": "llama-server", "model": "synthetic:small"},
  "factors": {"prompt_tokens": [32, 64], "num_ctx": [512], "cache_type": ["f16"]},
  "repeats": 3, "warmup": 1, "max_tokens": 4, "seed": 7 })";

// One run's surroundings: a fake clock (also the wall clock, in seconds since an epoch in 2027),
// a strict transport (the runner must send nothing itself: everything goes through the session)
// and the fake server kind.
class Bench {
 public:
  Bench() {
    options.results_root = root_;
    options.progress = false;
  }
  ~Bench() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  RunSummary run(const std::string& scenario_text) {
    return run_scenario(scenario::parse_scenario(scenario_text, "fake.json"), options, ctx);
  }

  FakeClock clock{std::chrono::seconds(1'800'000'000)};
  FakeScript script;
  ScriptedTransport transport{/*strict=*/true};
  std::vector<http::Request> concurrent_requests;
  RunOptions options;
  // The run's surroundings: scripted, with no machine state or CPU clock unless a test scripts
  // one, and think time passing on the fake clock.
  class Context final : public RunContext {
   public:
    explicit Context(Bench& b) : b_(b) {}
    const Clock& clock() const override { return b_.clock; }
    const Clock& wall_clock() const override { return b_.clock; }
    http::Transport& transport() override { return b_.transport; }
    std::unique_ptr<http::ConcurrentTransport> concurrent_transport() override {
      return std::make_unique<ScriptedConcurrentTransport>(b_.clock, b_.concurrent_requests);
    }
    std::unique_ptr<Servers> servers(const scenario::Scenario&, const RunOptions&, http::Transport&,
                                     const std::string&) override {
      return std::make_unique<FakeServers>(b_.script, b_.clock);
    }
    std::optional<measure::MachineState> machine_state() override {
      return machine_state_fn ? std::optional(machine_state_fn()) : std::nullopt;
    }
    std::optional<double> cpu_clock() override {
      return cpu_clock_fn ? cpu_clock_fn() : std::nullopt;
    }
    void sleep(double seconds) override {
      b_.clock.advance(std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(seconds)));
    }
    std::function<measure::MachineState()> machine_state_fn;
    std::function<std::optional<double>()> cpu_clock_fn;

   private:
    Bench& b_;
  };
  Context ctx{*this};

 private:
  fs::path root_ =
      fs::temp_directory_path() /
      ("kvbench-runner-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

std::vector<CallRecord> records_of(const RunSummary& s) {
  return results::load_run(s.run_dir).calls;
}

json run_json_of(const RunSummary& s) {
  return results::load_run(s.run_dir).run;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

// Rewrites `p` with `lines` (a calls.jsonl cut short, as a run stopped early leaves it).
void write_lines(const fs::path& p, const std::vector<std::string>& lines) {
  std::ofstream out(p, std::ios::trunc);
  for (const auto& l : lines) {
    out << l << "\n";
  }
}

std::set<std::string> nonces(const std::vector<CallRecord>& rs) {
  std::set<std::string> out;
  for (const auto& r : rs) {
    out.insert(r.nonce);
  }
  return out;
}

TEST(Runner, RecordsTheMachineStateAroundEachBlock) {
  Bench b;
  int samples = 0;
  b.ctx.machine_state_fn = [&] {
    measure::MachineState m;
    m.governor = samples == 0 ? "powersave" : "performance";
    m.cpu_times = measure::CpuTimes{100U + 50U * static_cast<unsigned>(samples), 100, 0};
    ++samples;
    return m;
  };
  const auto summary = b.run(kSequential);
  EXPECT_EQ(samples, 2) << "one sample before the block, one after";
  const json block = run_json_of(summary)["blocks"][0];
  ASSERT_TRUE(block.contains("machine_state")) << block.dump();
  EXPECT_EQ(block["machine_state"]["start"]["governor"], "powersave");
  EXPECT_EQ(block["machine_state"]["end"]["governor"], "performance");
  EXPECT_DOUBLE_EQ(block["machine_state"]["busy_share"].get<double>(), 1.0);
  ASSERT_EQ(block["machine_state"]["warnings"].size(), 1U);
  EXPECT_NE(block["machine_state"]["warnings"][0].get<std::string>().find("powersave"),
            std::string::npos);
}

TEST(Runner, RecordsTheCpuClockReadJustBeforeEachCall) {
  Bench b;
  double mhz = 3000;
  b.ctx.cpu_clock_fn = [&]() -> std::optional<double> { return mhz -= 100; };
  const auto records = records_of(b.run(kSequential));
  ASSERT_FALSE(records.empty());
  for (std::size_t i = 0; i < records.size(); ++i) {
    ASSERT_TRUE(records[i].cpu_mhz) << i;
    EXPECT_DOUBLE_EQ(*records[i].cpu_mhz, 2900.0 - 100.0 * static_cast<double>(i)) << i;
  }
  const nlohmann::json j = to_json(records.front());
  EXPECT_DOUBLE_EQ(j["cpu_mhz"].get<double>(), 2900.0);
  EXPECT_EQ(record_from_json(j).cpu_mhz, 2900.0) << "read back";
  Bench unread;  // a machine without cpufreq: the field is absent
  unread.ctx.cpu_clock_fn = [] { return std::optional<double>(); };
  const auto plain = records_of(unread.run(kSequential));
  EXPECT_FALSE(plain.front().cpu_mhz);
  EXPECT_FALSE(to_json(plain.front()).contains("cpu_mhz"));
  // An attached server may run elsewhere: this machine's clock is not its clock.
  Bench attached;
  int reads = 0;
  attached.ctx.cpu_clock_fn = [&]() -> std::optional<double> {
    ++reads;
    return 3000.0;
  };
  std::string scenario = kSequential;
  const std::string model = R"("model": "synthetic:small")";
  scenario.replace(scenario.find(model), model.size(), R"("url": "http://127.0.0.1:8080")");
  const auto remote = records_of(attached.run(scenario));
  ASSERT_FALSE(remote.empty());
  EXPECT_FALSE(remote.front().cpu_mhz);
  EXPECT_EQ(reads, 0);
}

// TTFT 40 ms + 1 ms per prompt token, give or take up to 5 % (a fixed pattern over the calls).
std::chrono::microseconds sloped_ttft(std::size_t tokens, int call) {
  const double jitter = 0.01 * static_cast<double>((call * 7919) % 11 - 5);
  return std::chrono::microseconds(
      static_cast<long>((40'000.0 + 1'000.0 * static_cast<double>(tokens)) * (1 + jitter)));
}

std::string with_precision(double half_width, int max_calls) {
  std::string s = kSequential;
  s.insert(s.rfind('}'), fmt::format(R"(, "precision": {{"metric": "ttft_ms", "half_width": {},
    "max_calls": {}}})",
                                     half_width, max_calls));
  return s;
}

TEST(Runner, PrecisionReachedStopsAfterThePlannedCalls) {
  Bench b;
  b.script.ttft_of = sloped_ttft;
  const auto summary = b.run(with_precision(0.5, 1000));
  const json run = run_json_of(summary);
  ASSERT_TRUE(run.contains("precision")) << run.dump();
  EXPECT_EQ(run["precision"]["status"], "reached");
  EXPECT_EQ(run["precision"]["checks"].size(), 1U);
  EXPECT_LE(run["precision"]["half_width"].get<double>(), 0.5);
  EXPECT_EQ(run["scenario"]["block_repeats"], 1);
  EXPECT_EQ(records_of(summary).size(), 7U);
}

TEST(Runner, PrecisionAddsSetsUntilTheBudgetAndSaysSo) {
  Bench b;
  b.script.ttft_of = sloped_ttft;
  // One set is 7 calls; a budget of 14 allows one more set and no third.
  const auto summary = b.run(with_precision(1e-9, 14));
  const json run = run_json_of(summary);
  EXPECT_EQ(run["precision"]["status"], "budget spent");
  ASSERT_EQ(run["precision"]["checks"].size(), 2U);
  EXPECT_EQ(run["precision"]["checks"][0]["status"], "continuing");
  EXPECT_EQ(run["precision"]["calls"], 14);
  EXPECT_EQ(run["scenario"]["block_repeats"], 2);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 14U);
  EXPECT_EQ(nonces(rs).size(), rs.size()) << "every call of every set has its own first line";
  EXPECT_EQ(b.script.opened, (std::vector<int>{0, 1})) << "the second set is one more block";
  // The first set is the plan of the scenario without precision, call for call.
  EXPECT_EQ(
      run["plan"]["blocks"][0],
      plan::to_json(plan::make_plan(scenario::parse_scenario(kSequential, "s.json")))["blocks"][0]);
  EXPECT_EQ(run["precision"]["checks"][0]["calls"], 7);
  EXPECT_EQ(run["precision"]["checks"][1]["sets"], 2);
}

TEST(Runner, RecordsEverySequentialCallWithItsKindAndTimings) {
  Bench b;
  const auto summary = b.run(kSequential);
  EXPECT_TRUE(summary.complete);
  EXPECT_EQ(summary.calls, 7);
  EXPECT_EQ(summary.failed, 0);
  EXPECT_EQ(summary.flagged, 0);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 7U);
  EXPECT_EQ(rs[0].kind, CallKind::warmup) << "the block's first call is its warm-up";
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(r.kind, i == 0 ? CallKind::warmup : CallKind::timed);
    EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
    EXPECT_EQ(r.block, 0);
    EXPECT_EQ(r.num_ctx, 512);
    EXPECT_EQ(r.cache_type, "f16");
    EXPECT_EQ(r.run_id, rs[0].run_id);
    ASSERT_TRUE(r.prompt_tokens_counted);
    EXPECT_EQ(*r.prompt_tokens_counted, r.prompt_tokens) << "prompts are built to their length";
    ASSERT_TRUE(r.client.ttft_ms && r.client.decode_tps);
    EXPECT_DOUBLE_EQ(*r.client.ttft_ms, 100.0);
    EXPECT_DOUBLE_EQ(*r.client.decode_tps, 100.0) << "3 tokens after the first, 10 ms apart";
    EXPECT_EQ(r.client.tokens, 4);
    ASSERT_TRUE(r.expected_cache_n && r.server.cache_n);
    EXPECT_EQ(*r.server.cache_n, *r.expected_cache_n);
    EXPECT_TRUE(r.flags.empty());
    if (i > 0) {
      EXPECT_GT(r.t_start_s, rs[i - 1].t_start_s);
    }
  }
  EXPECT_DOUBLE_EQ(rs[0].t_start_s, 0.0) << "elapsed time counts from the first call";
  EXPECT_EQ(nonces(rs).size(), rs.size()) << "every first line is unique";
  const json run = run_json_of(summary);
  EXPECT_EQ(run["status"], "complete");
  EXPECT_EQ(run["server"]["kind"], "fake");
  EXPECT_EQ(run["model"]["name"], "fake-model");
  ASSERT_EQ(run["blocks"].size(), 1U);
  EXPECT_EQ(run["blocks"][0]["url"], "fake://block0");
  EXPECT_EQ(run["blocks"][0]["fake_closed"], true);
  EXPECT_EQ(run["summary"]["calls"], 7);
  EXPECT_EQ(b.script.opened, std::vector<int>{0});
  EXPECT_EQ(b.script.closed, 1);
}

TEST(Runner, ReuseBeyondThePredictionIsFlagged) {
  Bench b;
  b.script.reported_cache_n[3] = 30;  // the fourth call claims 30 tokens it should not have
  const auto summary = b.run(kSequential);
  EXPECT_EQ(summary.flagged, 1);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 7U);
  EXPECT_THAT(rs[3].flags, ::testing::ElementsAre("unexpected_cache_reuse", "prompt_cache_hit"));
  for (std::size_t i = 0; i < rs.size(); ++i) {
    if (i != 3) {
      EXPECT_TRUE(rs[i].flags.empty()) << i;
    }
  }
}

TEST(Runner, EachEditedReadFollowsItsColdReadAndReusesItsPrefix) {
  Bench b;
  const auto summary = b.run(R"({
    "name": "pairs", "server": {"kind": "llama-server", "model": "synthetic:small"},
    "factors": {"prompt_tokens": [64], "edit_position": [0.5, "none"], "num_ctx": [512],
                "cache_type": ["f16"]},
    "repeats": 2, "warmup": 1, "max_tokens": 2, "seed": 3 })");
  EXPECT_TRUE(summary.complete);
  EXPECT_EQ(summary.flagged, 0);
  const auto rs = records_of(summary);
  int edited = 0;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    if (rs[i].pair_role != kvbench::PairRole::edited) {
      continue;
    }
    ++edited;
    ASSERT_GT(i, 0U);
    const auto& cold = rs[i - 1];
    const auto& r = rs[i];
    EXPECT_EQ(cold.pair_role, kvbench::PairRole::cold)
        << "the cold read comes right before its resend";
    ASSERT_TRUE(r.pair_id && cold.pair_id);
    EXPECT_EQ(*r.pair_id, cold.seq);
    EXPECT_EQ(*cold.pair_id, cold.seq);
    EXPECT_EQ(r.nonce, cold.nonce) << "the resend repeats its cold read's first line";
    EXPECT_EQ(r.edit_position, cold.edit_position);
    ASSERT_TRUE(r.expected_cache_n && r.server.cache_n && r.prompt_tokens_counted);
    EXPECT_EQ(*r.server.cache_n, *r.expected_cache_n);
    if (r.edit_position == "none") {
      EXPECT_EQ(*r.expected_cache_n, *r.prompt_tokens_counted - 1)
          << "an unchanged resend reuses all but the token the server always re-reads";
    } else {
      ASSERT_TRUE(r.edit_first_diff);
      EXPECT_EQ(*r.expected_cache_n, *r.edit_first_diff);
      EXPECT_NEAR(*r.edit_first_diff, 32, 3);
    }
  }
  EXPECT_EQ(edited, 4);
}

TEST(Runner, ARestartedServerCarriesTheBlockOn) {
  Bench b;
  b.script.failing_calls = {2};
  b.script.failure_kills_server = true;
  const auto summary = b.run(kSequential);
  EXPECT_TRUE(summary.complete);
  EXPECT_EQ(summary.failed, 1);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 7U);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    EXPECT_EQ(rs[i].outcome, i == 2 ? Outcome::connect_error : Outcome::ok) << i;
  }
  EXPECT_EQ(summary.flagged, 0) << "after a restart nothing is predicted to be reused";
  EXPECT_EQ(rs[3].expected_cache_n, 0);
  const json block = run_json_of(summary)["blocks"][0];
  ASSERT_EQ(block["restarts"].size(), 1U);
  EXPECT_EQ(block["restarts"][0]["after_seq"], rs[2].seq);
  EXPECT_EQ(block["restarts"][0]["exit"], "killed by the script");
  EXPECT_EQ(block["restarts"][0]["url"], "fake://block0");
  EXPECT_FALSE(block["restarts"][0].contains("gave_up"));
  EXPECT_EQ(b.script.restarts, 1);
}

TEST(Runner, AServerThatDoesNotComeBackFailsTheRestOfItsBlock) {
  Bench b;
  b.script.failing_calls = {1};
  b.script.failure_kills_server = true;
  b.script.failing_restarts = 1;
  const auto summary = b.run(kSequential);
  EXPECT_TRUE(summary.complete) << "every call has a record";
  EXPECT_EQ(summary.failed, 6);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 7U);
  EXPECT_EQ(rs[1].outcome, kvbench::Outcome::connect_error);
  for (std::size_t i = 2; i < rs.size(); ++i) {
    EXPECT_EQ(rs[i].outcome, kvbench::Outcome::server_died) << i;
    EXPECT_EQ(rs[i].error, "the server died and 3 restarts did not bring it back");
  }
  EXPECT_EQ(b.script.calls, 2) << "no call is sent to a server that is gone";
  const json restarts = run_json_of(summary)["blocks"][0]["restarts"];
  ASSERT_EQ(restarts.size(), 1U);
  EXPECT_EQ(restarts[0]["error"], "the fake server did not come back");
  EXPECT_EQ(restarts[0]["gave_up"], true);
}

TEST(Runner, RestartsAreBoundedPerBlock) {
  Bench b;
  b.script.failing_calls = {1, 2, 3, 4};  // every restarted server dies on its first call
  b.script.failure_kills_server = true;
  const auto summary = b.run(kSequential);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 7U);
  EXPECT_EQ(b.script.restarts, 3) << "three restarts, then the block is given up";
  for (std::size_t i = 1; i <= 4; ++i) {
    EXPECT_EQ(rs[i].outcome, kvbench::Outcome::connect_error) << i;
  }
  EXPECT_EQ(rs[5].outcome, kvbench::Outcome::server_died);
  EXPECT_EQ(rs[6].outcome, kvbench::Outcome::server_died);
  const json restarts = run_json_of(summary)["blocks"][0]["restarts"];
  ASSERT_EQ(restarts.size(), 4U);
  EXPECT_FALSE(restarts[2].contains("gave_up"));
  EXPECT_EQ(restarts[3]["gave_up"], true);
  EXPECT_FALSE(restarts[3].contains("error")) << "no fourth restart was tried";
}

TEST(Runner, ABlockWhoseServerDoesNotStartIsRecordedAndTheRunGoesOn) {
  Bench b;
  b.script.blocks_not_starting = {0};
  const auto summary = b.run(R"({
    "name": "two", "server": {"kind": "llama-server", "model": "synthetic:small"},
    "factors": {"prompt_tokens": [32], "num_ctx": [512, 1024], "cache_type": ["f16"]},
    "repeats": 2, "warmup": 1, "max_tokens": 2, "seed": 5 })");
  EXPECT_TRUE(summary.complete);
  EXPECT_EQ(summary.calls, 6);
  EXPECT_EQ(summary.failed, 3);
  for (const auto& r : records_of(summary)) {
    EXPECT_EQ(r.outcome, r.block == 0 ? Outcome::server_start_error : Outcome::ok) << r.seq;
    if (r.block == 0) {
      EXPECT_EQ(r.error, "the fake server did not start");
    }
  }
  const json run = run_json_of(summary);
  ASSERT_EQ(run["blocks"].size(), 2U);
  EXPECT_EQ(run["blocks"][0]["error"], "the fake server did not start");
  EXPECT_FALSE(run["blocks"][0].contains("fake_closed"));
  EXPECT_EQ(run["blocks"][1]["fake_closed"], true);
  EXPECT_EQ(b.script.opened, (std::vector<int>{0, 1}));
}

TEST(Runner, ResumeRecordsTheRestWithTheRunsIdAndElapsedTimeGoingOn) {
  Bench b;
  const auto first = b.run(kSequential);
  const fs::path calls = first.run_dir / "calls.jsonl";
  auto lines = lines_of(calls);
  ASSERT_EQ(lines.size(), 7U);
  {
    std::ofstream out(calls, std::ios::trunc);
    for (std::size_t i = 0; i < 3; ++i) {
      out << lines[i] << '\n';
    }
    out << lines[3].substr(0, 20);  // a record cut short
  }
  const auto kept = results::load_run(first.run_dir).calls;
  ASSERT_EQ(kept.size(), 3U);
  b.clock.advance(std::chrono::seconds(60));
  const auto resumed = resume_run(first.run_dir, b.options, b.ctx);
  EXPECT_TRUE(resumed.complete);
  EXPECT_EQ(resumed.calls, 4);
  const results::LoadedRun after = results::load_run(first.run_dir);
  EXPECT_TRUE(after.warnings.empty()) << "the partial line was cut off before appending";
  ASSERT_EQ(after.calls.size(), 7U);
  std::set<int> seqs;
  for (std::size_t i = 0; i < after.calls.size(); ++i) {
    const auto& r = after.calls[i];
    seqs.insert(r.seq);
    EXPECT_EQ(r.run_id, kept[0].run_id) << "a resumed run keeps its id";
    if (i >= 3) {
      EXPECT_GT(r.t_start_s, kept.back().t_start_s + 60) << "elapsed time goes on across resume";
    }
  }
  EXPECT_EQ(seqs.size(), 7U);
  EXPECT_EQ(nonces(after.calls).size(), 7U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(after.calls[i].nonce, kept[i].nonce);
  }
  const json run = after.run;
  EXPECT_EQ(run["status"], "complete");
  ASSERT_EQ(run["resumed"].size(), 1U);
  EXPECT_EQ(run["resumed"][0]["calls_recorded"], 3);
  EXPECT_EQ(run["blocks"].size(), 2U) << "the block was run once, then again for its rest";
}

TEST(Runner, ExtendAppendsWholeSetsOfVariantsAndKeepsWhatWasRecorded) {
  Bench b;
  const auto first = b.run(R"({
    "name": "ab", "server": {"kind": "llama-server", "model": "synthetic:small"},
    "variants": [{"name": "baseline"}, {"name": "candidate"}],
    "factors": {"prompt_tokens": [32], "num_ctx": [512], "cache_type": ["f16"]},
    "repeats": 2, "warmup": 1, "max_tokens": 2, "seed": 9 })");
  ASSERT_TRUE(first.complete);
  const auto before = lines_of(first.run_dir / "calls.jsonl");
  const auto first_run = run_json_of(first);
  ASSERT_EQ(first_run["blocks"].size(), 4U) << "ABBA";
  const auto extended = extend_run(first.run_dir, 1, b.options, b.ctx);
  EXPECT_TRUE(extended.complete);
  EXPECT_EQ(extended.calls, static_cast<int>(before.size()));
  const auto after = lines_of(first.run_dir / "calls.jsonl");
  ASSERT_EQ(after.size(), 2 * before.size());
  EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin()));
  const auto rs = results::load_run(first.run_dir).calls;
  EXPECT_EQ(nonces(rs).size(), rs.size());
  const auto baseline = std::count_if(rs.begin(), rs.end(),
                                      [](const CallRecord& r) { return r.variant == "baseline"; });
  const auto candidate = std::count_if(
      rs.begin(), rs.end(), [](const CallRecord& r) { return r.variant == "candidate"; });
  EXPECT_EQ(baseline, candidate) << "whole sets: each variant as often as the other";
  EXPECT_EQ(baseline + candidate, static_cast<long>(rs.size()));
  const json run = results::load_run(first.run_dir).run;
  EXPECT_EQ(run["blocks"].size(), 8U);
  ASSERT_EQ(run["extended"].size(), 1U);
  EXPECT_EQ(run["extended"][0]["sets_before"], 1);
}

constexpr auto kConcurrent = R"({
  "name": "streams", "server": {"kind": "llama-server", "model": "synthetic:small"},
  "factors": {"prompt_tokens": [32], "num_ctx": [512], "cache_type": ["f16"]},
  "concurrency": {"streams": [2]}, "repeats": 6, "warmup": 0, "max_tokens": 4, "seed": 11 })";

TEST(Runner, ConcurrentCallsArePinnedToTheirStreamsSlot) {
  Bench b;
  const auto summary = b.run(kConcurrent);
  EXPECT_TRUE(summary.complete);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 6U);
  ASSERT_EQ(b.concurrent_requests.size(), 6U);
  int both = 0;
  for (const auto& r : rs) {
    SCOPED_TRACE(r.seq);
    EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
    EXPECT_EQ(r.slots, 2);
    ASSERT_TRUE(r.stream && r.in_flight);
    EXPECT_TRUE(*r.stream == 0 || *r.stream == 1);
    EXPECT_LE(*r.in_flight, 2);
    both += *r.in_flight == 2 ? 1 : 0;
    EXPECT_TRUE(r.expected_cache_n) << "a pinned slot predicts its reuse";
    EXPECT_EQ(r.client.tokens, 4);
    const auto sent =
        std::find_if(b.concurrent_requests.begin(), b.concurrent_requests.end(),
                     [&](const http::Request& q) { return q.body.rfind(r.nonce + "\n", 0) == 0; });
    ASSERT_NE(sent, b.concurrent_requests.end());
    EXPECT_EQ(sent->url, "fake://slot/" + std::to_string(*r.stream));
  }
  EXPECT_GE(both, 4) << "two streams were in flight at once";
  const json block = run_json_of(summary)["blocks"][0];
  EXPECT_EQ(block["slots"], 2);
  EXPECT_EQ(block["concurrency"]["calls"], 6);
  EXPECT_FALSE(block.contains("server_queue"));
}

TEST(Runner, ConcurrentCallsOnAServerThatPicksItsSlotsPredictNothing) {
  Bench b;
  b.script.capabilities = {.token_ids = false, .slot_pinning = false, .queue_in_durations = true};
  const auto summary = b.run(kConcurrent);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 6U);
  for (const auto& r : rs) {
    EXPECT_FALSE(r.expected_cache_n) << r.seq;
    EXPECT_FALSE(r.prompt_tokens_counted) << "no ids, no count before sending";
  }
  for (const auto& q : b.concurrent_requests) {
    EXPECT_EQ(q.url, "fake://slot/0") << "no call is pinned";
  }
  const json block = run_json_of(summary)["blocks"][0];
  EXPECT_TRUE(block.contains("server_queue")) << "queueing is read from the server's durations";
}

namespace conversations {

constexpr auto kConversation = R"({
  "name": "chat", "server": {"kind": "llama-server", "model": "synthetic:small"},
  "factors": {"num_ctx": [4096], "cache_type": ["f16"]},
  "conversation": {"turns": 4, "system_tokens": 24, "user_tokens": 10, "answer_tokens": 4,
                   "conversations": [1, 3], "reuse": ["on", "off"], "slots": 1},
  "warmup": 1, "seed": 11 })";

// Turns that failed.
int failed_turns(const std::vector<CallRecord>& rs) {
  return static_cast<int>(std::count_if(rs.begin(), rs.end(), [](const CallRecord& r) {
    return workloads::turn_record(r) && !r.ok();
  }));
}

// No turn sent back an empty answer (a failed turn's): the history skips what failed.
void expect_no_empty_answer_sent(const FakeScript& script) {
  for (const auto& messages : script.messages) {
    for (const auto& m : messages) {
      EXPECT_FALSE(m.role == "assistant" && m.content.empty())
          << "a failed turn's (empty) answer was sent back";
    }
  }
}

std::vector<CallRecord> turns_of(const std::vector<CallRecord>& rs, int level, bool reuse) {
  std::vector<CallRecord> out;
  for (const auto& r : rs) {
    if (workloads::turn_record(r) && workloads::turn_record(r)->conversations == level &&
        workloads::turn_record(r)->reuse == reuse) {
      out.push_back(r);
    }
  }
  return out;
}

TEST(RunnerConversation, EachTurnReusesItsHistoryExactlyAsPredicted) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto rs = records_of(b.run(kConversation));
  ASSERT_EQ(rs.size(), 1U + (1 + 3) * 4 * 2);
  const auto one = turns_of(rs, 1, true);
  ASSERT_EQ(one.size(), 4U);
  for (const auto& r : one) {
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.nonce, one[0].nonce) << "one first line for the whole conversation";
    EXPECT_FALSE(workloads::turn_record(r)->answer.empty());
    ASSERT_TRUE(workloads::turn_record(r)->history_tokens && r.expected_cache_n &&
                r.server.cache_n);
    if (workloads::turn_record(r)->turn == 1) {
      EXPECT_EQ(*workloads::turn_record(r)->history_tokens, 0);
      continue;
    }
    // Its history: everything through the previous answer, which the fake's slot holds less its
    // last token; the slot is its own, so both predictions agree with the server.
    EXPECT_EQ(workloads::turn_record(r)->history_basis, "ids");
    EXPECT_GT(
        *workloads::turn_record(r)->history_tokens,
        *one[static_cast<std::size_t>(workloads::turn_record(r)->turn - 2)].prompt_tokens_counted);
    EXPECT_EQ(*r.server.cache_n, *workloads::turn_record(r)->history_tokens)
        << "turn " << workloads::turn_record(r)->turn;
    EXPECT_EQ(*r.expected_cache_n, *workloads::turn_record(r)->history_tokens);
    EXPECT_TRUE(r.flags.empty()) << fmt::format("{}", fmt::join(r.flags, ","));
    EXPECT_GT(
        *r.prompt_tokens_counted,
        *one[static_cast<std::size_t>(workloads::turn_record(r)->turn - 2)].prompt_tokens_counted);
  }
}

TEST(RunnerConversation, ThreeConversationsOnOneSlotLoseTheirHistoryAndAreFlagged) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto rs = records_of(b.run(kConversation));
  const auto three = turns_of(rs, 3, true);
  ASSERT_EQ(three.size(), 12U);
  // Round-robin: conversation k's turn t comes after every conversation's turn t - 1.
  for (std::size_t i = 0; i < three.size(); ++i) {
    EXPECT_EQ(workloads::turn_record(three[i])->turn, static_cast<int>(i / 3) + 1);
    EXPECT_EQ(workloads::turn_record(three[i])->conversation,
              workloads::turn_record(three[i % 3])->conversation);
  }
  for (const auto& r : three) {
    if (workloads::turn_record(r)->turn == 1) {
      continue;
    }
    ASSERT_TRUE(r.server.cache_n && r.expected_cache_n &&
                workloads::turn_record(r)->history_tokens);
    // The slot last held another conversation: only the shared system prompt is in common.
    EXPECT_EQ(*r.server.cache_n, *r.expected_cache_n) << "the proof holds: what the slot held";
    EXPECT_LT(*r.server.cache_n, *workloads::turn_record(r)->history_tokens);
    EXPECT_GT(*r.server.cache_n, 0) << "the system prompt is shared";
    EXPECT_THAT(r.flags, ::testing::Contains("history_lost"));
  }
}

TEST(RunnerConversation, ReuseOffSendsAFreshFirstLineAndNoCachePromptEveryTurn) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto rs = records_of(b.run(kConversation));
  const auto off = turns_of(rs, 1, false);
  ASSERT_EQ(off.size(), 4U);
  std::set<std::string> lines;
  for (const auto& r : off) {
    lines.insert(r.nonce);
    EXPECT_EQ(r.server.cache_n, 0);
    EXPECT_EQ(r.expected_cache_n, 0);
    EXPECT_EQ(workloads::turn_record(r)->history_tokens, 0);
    EXPECT_TRUE(r.flags.empty());
  }
  EXPECT_EQ(lines.size(), 4U) << "a fresh first line every turn";
  // The same history grows as with reuse on: the prompts have the same lengths.
  const auto on = turns_of(rs, 1, true);
  for (std::size_t i = 0; i < off.size(); ++i) {
    EXPECT_EQ(off[i].prompt_tokens_counted, on[i].prompt_tokens_counted);
  }
}

TEST(RunnerConversation, TheReportAnswersHowManyConversationsStayCached) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto summary = b.run(kConversation);
  const auto loaded = results::load_run(summary.run_dir);
  const auto report = report::conversation_report(
      std::get<workloads::Conversation>(
          workloads::of(scenario::parse_scenario(loaded.run.scenario.dump(), "run.json"))),
      loaded.run, loaded.calls);
  ASSERT_TRUE(report.present);
  ASSERT_EQ(report.levels.size(), 2U);
  EXPECT_DOUBLE_EQ(report.levels[0].reuse_rate, 1.0);
  EXPECT_EQ(report.levels[0].kept, 3);
  EXPECT_LT(report.levels[1].reuse_rate, 1.0);
  EXPECT_EQ(report.levels[1].kept, 0);
  ASSERT_EQ(report.answers.size(), 1U);
  EXPECT_EQ(report.answers[0].kept_up_to, 1);
  EXPECT_EQ(report.answers[0].first_lost, 3);
  EXPECT_EQ(report.lost, 9);
  EXPECT_EQ(report.lost_where.size(), 3U);
  EXPECT_EQ(report.saving.size(), 4U) << "reuse on against off at each turn of the 1-set";
  std::ostringstream md;
  report::write_conversation_markdown(md, report);
  EXPECT_THAT(md.str(),
              ::testing::HasSubstr("up to 1 conversation of this length keeps its history"));
}

TEST(RunnerConversation, ThinkTimeSpacesAConversationsTurns) {
  Bench b;
  std::string s = kConversation;
  s.replace(s.find(R"("slots": 1)"), 10, R"("slots": 1, "think_time_s": 2)");
  const auto rs = records_of(b.run(s));
  const auto one = turns_of(rs, 1, true);
  ASSERT_EQ(one.size(), 4U);
  for (std::size_t i = 1; i < one.size(); ++i) {
    const double ended = one[i - 1].t_start_s + *one[i - 1].client.e2e_ms / 1000;
    EXPECT_GE(one[i].t_start_s - ended, 2.0 - 1e-6) << "turn " << i + 1;
  }
}

TEST(RunnerConversation, AResumedConversationContinuesFromItsRecordedAnswers) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto first = b.run(kConversation);
  const fs::path calls = first.run_dir / "calls.jsonl";
  // Cut after the first 12 records (the warm-up and 11 turns), then resume.
  auto lines = lines_of(calls);
  lines.resize(12);
  write_lines(calls, lines);
  const std::size_t before = b.script.messages.size();
  resume_run(first.run_dir, b.options, b.ctx);
  const auto all = records_of(RunSummary{first.run_dir});
  ASSERT_EQ(all.size(), 1U + (1 + 3) * 4 * 2);
  // Every resumed turn sent its conversation's recorded first line and answers, in order.
  std::map<std::pair<int, int>, std::vector<const CallRecord*>> by_conversation;
  for (const auto& r : all) {
    if (workloads::turn_record(r)) {
      by_conversation[{r.block, workloads::turn_record(r)->conversation}].push_back(&r);
    }
  }
  std::size_t sent = before;
  int rebuilt = 0;
  for (std::size_t i = 12; i < all.size(); ++i, ++sent) {
    const CallRecord& r = all[i];
    ASSERT_TRUE(workloads::turn_record(r) && sent < b.script.messages.size());
    const auto& messages = b.script.messages[sent];
    const auto& earlier = by_conversation[{r.block, workloads::turn_record(r)->conversation}];
    std::vector<std::string> answers;
    for (const auto& m : messages) {
      if (m.role == "assistant") {
        answers.push_back(m.content);
      }
    }
    ASSERT_EQ(answers.size(), static_cast<std::size_t>(workloads::turn_record(r)->turn - 1))
        << "seq " << r.seq;
    for (int k = 0; k + 1 < workloads::turn_record(r)->turn; ++k) {
      EXPECT_EQ(answers[static_cast<std::size_t>(k)],
                workloads::turn_record(*earlier[static_cast<std::size_t>(k)])->answer)
          << "seq " << r.seq << ": the answer of turn " << k + 1;
    }
    if (workloads::turn_record(r)->reuse) {
      EXPECT_EQ(messages[1].content.substr(0, earlier[0]->nonce.size()), earlier[0]->nonce)
          << "seq " << r.seq << ": the conversation's own first line";
    }
    rebuilt += workloads::turn_record(r)->turn > 1 && earlier[0]->seq < all[12].seq ? 1 : 0;
  }
  EXPECT_GT(rebuilt, 0) << "some conversation was cut mid-way and rebuilt";
}

TEST(RunnerConversation, AFailedTurnLeavesItsConversationsHistoryAsItWas) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  b.script.failing_calls = {2, 7};
  const auto summary = b.run(kConversation);
  const auto rs = records_of(summary);
  const int failed = failed_turns(rs);
  EXPECT_EQ(failed, 2);
  expect_no_empty_answer_sent(b.script);
  const auto loaded = results::load_run(summary.run_dir);
  const auto report = report::conversation_report(
      std::get<workloads::Conversation>(
          workloads::of(scenario::parse_scenario(loaded.run.scenario.dump(), "run.json"))),
      loaded.run, loaded.calls);
  int reported = 0;
  for (const auto& row : report.rows) {
    reported += row.failed;
  }
  EXPECT_EQ(reported, 2) << "the report counts the failed turns";
}

// A set's conversations in flight at once (conversation.concurrent), through the scripted
// concurrent transport: each poll ends every call in flight, 4 chunks (the 4 answer tokens) each.
constexpr auto kAtOnce = R"({
  "name": "chats", "server": {"kind": "llama-server", "model": "synthetic:small"},
  "factors": {"num_ctx": [4096], "cache_type": ["f16"]},
  "conversation": {"turns": 4, "system_tokens": 24, "user_tokens": 10, "answer_tokens": 4,
                   "conversations": [CONVERSATIONS], "slots": 2, "concurrent": true},
  "warmup": 1, "seed": 11 })";

std::string at_once(int conversations) {
  std::string s = kAtOnce;
  s.replace(s.find("CONVERSATIONS"), 13, std::to_string(conversations));
  return s;
}

TEST(RunnerConversationAtOnce, TwoConversationsOverTwoSlotsRunAtOnceAndReuseExactly) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto summary = b.run(at_once(2));
  EXPECT_TRUE(summary.complete);
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 1U + 2 * 4);
  EXPECT_EQ(b.concurrent_requests.size(), 8U) << "every turn went through the streams";
  int both = 0;
  std::map<int, int> last_turn;
  for (const auto& r : rs) {
    if (!workloads::turn_record(r)) {
      continue;
    }
    SCOPED_TRACE(fmt::format("conversation {} turn {}", workloads::turn_record(r)->conversation,
                             workloads::turn_record(r)->turn));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_TRUE(r.stream && r.in_flight && workloads::turn_record(r)->wait_ms);
    EXPECT_EQ(*r.stream, workloads::turn_record(r)->slot.value_or(-1))
        << "one stream per conversation, its slot";
    EXPECT_LE(*r.in_flight, 2);
    EXPECT_GE(*workloads::turn_record(r)->wait_ms, 0.0);
    both += *r.in_flight == 2 ? 1 : 0;
    EXPECT_EQ(workloads::turn_record(r)->turn,
              last_turn[workloads::turn_record(r)->conversation] + 1)
        << "its turns in order";
    last_turn[workloads::turn_record(r)->conversation] = workloads::turn_record(r)->turn;
    EXPECT_FALSE(workloads::turn_record(r)->answer.empty())
        << "the streamed answer joins the conversation";
    ASSERT_TRUE(r.server.cache_n && r.expected_cache_n &&
                workloads::turn_record(r)->history_tokens);
    EXPECT_EQ(*r.server.cache_n, *r.expected_cache_n) << "the proof holds";
    if (workloads::turn_record(r)->turn > 1) {
      EXPECT_EQ(*r.server.cache_n, *workloads::turn_record(r)->history_tokens)
          << "its own slot kept its history";
    }
    EXPECT_TRUE(r.flags.empty()) << fmt::format("{}", fmt::join(r.flags, ","));
  }
  EXPECT_GE(both, 1) << "both conversations were in flight at once";
  // Each later turn sent the answer its conversation got before.
  expect_no_empty_answer_sent(b.script);
}

TEST(RunnerConversationAtOnce, AConversationWaitsForItsSlotAndThatIsPredicted) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto rs = records_of(b.run(at_once(3)));
  ASSERT_EQ(rs.size(), 1U + 3 * 4);
  for (const auto& r : rs) {
    if (!workloads::turn_record(r)) {
      continue;
    }
    SCOPED_TRACE(fmt::format("conversation {} turn {}", workloads::turn_record(r)->conversation,
                             workloads::turn_record(r)->turn));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_TRUE(r.in_flight && r.server.cache_n && r.expected_cache_n);
    EXPECT_LE(*r.in_flight, 2) << "no more in flight than slots: the third waits for its slot";
    // The prediction is made when the slot is free: it holds whoever used it last.
    EXPECT_EQ(*r.server.cache_n, *r.expected_cache_n) << "the proof holds";
    if (workloads::turn_record(r)->turn == 1) {
      continue;
    }
    if (workloads::turn_record(r)->slot == 1) {  // conversation 1 has slot 1 to itself
      EXPECT_EQ(*r.server.cache_n, *workloads::turn_record(r)->history_tokens);
      EXPECT_TRUE(r.flags.empty());
    } else {  // conversations 0 and 2 take slot 0 in turn
      EXPECT_LT(*r.server.cache_n, *workloads::turn_record(r)->history_tokens);
      EXPECT_THAT(r.flags, ::testing::Contains("history_lost"));
    }
  }
}

TEST(RunnerConversationAtOnce, ThinkTimeSpacesEachConversationsTurns) {
  Bench b;
  std::string s = at_once(2);
  s.replace(s.find(R"("concurrent": true)"), 18, R"("concurrent": true, "think_time_s": 3)");
  const auto rs = records_of(b.run(s));
  std::map<int, const CallRecord*> previous;
  int spaced = 0;
  for (const auto& r : rs) {
    if (!workloads::turn_record(r)) {
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.error;
    const auto it = previous.find(workloads::turn_record(r)->conversation);
    if (it != previous.end()) {
      const CallRecord& p = *it->second;
      const double ended = p.t_start_s + *p.client.e2e_ms / 1000;
      EXPECT_GE(r.t_start_s - ended, 3.0 - 1e-6)
          << "conversation " << workloads::turn_record(r)->conversation << " turn "
          << workloads::turn_record(r)->turn;
      ++spaced;
    }
    previous[workloads::turn_record(r)->conversation] = &r;
  }
  EXPECT_EQ(spaced, 6);
}

TEST(RunnerConversationAtOnce, AResumedSetSendsOnlyTheRestFromTheRecordedAnswers) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  const auto first = b.run(at_once(2));
  const fs::path calls = first.run_dir / "calls.jsonl";
  auto lines = lines_of(calls);
  ASSERT_EQ(lines.size(), 9U);
  lines.resize(4);  // the warm-up and the first three turns to end
  write_lines(calls, lines);
  const std::size_t before = b.script.messages.size();
  resume_run(first.run_dir, b.options, b.ctx);
  const auto all = records_of(RunSummary{first.run_dir});
  ASSERT_EQ(all.size(), 9U);
  std::set<int> seqs;
  std::map<int, std::map<int, std::string>> answers;  // conversation, turn
  for (const auto& r : all) {
    seqs.insert(r.seq);
    if (workloads::turn_record(r)) {
      answers[workloads::turn_record(r)->conversation][workloads::turn_record(r)->turn] =
          workloads::turn_record(r)->answer;
    }
  }
  EXPECT_EQ(seqs.size(), 9U) << "every planned call once";
  EXPECT_EQ(b.script.messages.size() - before, 5U) << "only the five turns not recorded were sent";
  // Each resent turn carried its conversation's recorded answers, in order.
  for (std::size_t i = before; i < b.script.messages.size(); ++i) {
    std::vector<std::string> sent;
    for (const auto& m : b.script.messages[i]) {
      if (m.role == "assistant") {
        sent.push_back(m.content);
      }
    }
    bool matches = false;
    for (const auto& [conversation, turns] : answers) {
      bool all_match = sent.size() < turns.size();
      for (std::size_t k = 0; all_match && k < sent.size(); ++k) {
        all_match = turns.at(static_cast<int>(k) + 1) == sent[k];
      }
      matches = matches || all_match;
    }
    EXPECT_TRUE(matches) << "call " << i << " sent answers no conversation recorded";
  }
}

TEST(RunnerConversationAtOnce, AFailedTurnIsRecordedAndItsConversationGoesOn) {
  Bench b;
  b.script.capabilities.reuse_switch = true;
  b.script.failing_calls = {3};  // the warm-up is call 0
  const auto summary = b.run(at_once(2));
  const auto rs = records_of(summary);
  ASSERT_EQ(rs.size(), 1U + 2 * 4);
  const int failed = failed_turns(rs);
  EXPECT_EQ(failed, 1);
  expect_no_empty_answer_sent(b.script);
}

}  // namespace conversations

}  // namespace
}  // namespace kvbench::run
