// Concurrency on Ollama, against the fixture server that follows Ollama's API (tests/fixtures):
// a managed `ollama serve` stand-in started per level with OLLAMA_NUM_PARALLEL = the streams, an
// attached one with fewer slots than streams (the queueing measured and reported), one with a
// full queue (HTTP 503 recorded as refused), and `kvbench capacity --kind ollama`.

#include <algorithm>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"
#include "tests/integration/ollama_fixture_server.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

double ended_s(const CallRecord& c) {
  return c.t_start_s + c.client.e2e_ms.value_or(0) / 1000.0;
}

// The calls in the order they were sent.
std::vector<CallRecord> by_send(std::vector<CallRecord> calls) {
  std::sort(calls.begin(), calls.end(),
            [](const auto& a, const auto& b) { return a.t_start_s < b.t_start_s; });
  return calls;
}

std::string concurrency_scenario(const std::string& name, const json& server, int streams,
                                 int repeats) {
  return json{{"name", name},
              {"server", server},
              {"factors", {{"prompt_tokens", {256}}, {"num_ctx", {1024}}}},
              {"concurrency", {{"streams", json::array({streams})}}},
              {"repeats", repeats},
              {"warmup", 0},
              {"max_tokens", 32}}
      .dump(2);
}

TEST(OllamaConcurrency, ManagedServeGetsNumParallelAndFourCallsRunAtOnce) {
  const fs::path dir = fresh_dir("ollama-conc-managed");
  json s = json::parse(concurrency_scenario(
      "conc",
      {{"kind", "ollama"}, {"model", "synthetic-small"}, {"binary", KVBENCH_OLLAMA_FIXTURE}}, 4,
      8));
  s["concurrency"]["streams"] = {1, 4};
  const auto scenario = write_file(dir, "s.json", s.dump(2));
  const auto r =
      run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q", "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["status"], "complete");
  std::map<int, json> blocks;
  for (const auto& b : run["blocks"]) {
    blocks[b["slots"].get<int>()] = b;
  }
  ASSERT_EQ(blocks.size(), 2U);
  for (const auto& [slots, b] : blocks) {
    EXPECT_EQ(b["env"]["OLLAMA_NUM_PARALLEL"], std::to_string(slots));
    EXPECT_EQ(b["num_parallel"], slots);
    EXPECT_EQ(b["slot_ctx"], 1024) << "Ollama's context_length is per slot";
    EXPECT_THAT(b["reuse_prediction"].get<std::string>(), HasSubstr("no id_slot"));
    EXPECT_TRUE(b.contains("server_queue"));
  }
  // Memory scales with NUM_PARALLEL x num_ctx: three more slots of 1024 tokens.
  EXPECT_EQ(blocks[4]["memory"]["size_bytes"].get<std::int64_t>() -
                blocks[1]["memory"]["size_bytes"].get<std::int64_t>(),
            3 * 1024 * kF16BytesPerToken);

  const int four = blocks[4]["index"].get<int>();
  std::vector<CallRecord> calls;
  for (const auto& c : read_calls(run_dir)) {
    if (c.block == four) {
      calls.push_back(c);
    }
  }
  ASSERT_EQ(calls.size(), 8U);
  std::set<int> streams;
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_EQ(c.client.tokens, 32) << c.seq;
    EXPECT_TRUE(c.client.ttft_ms.has_value()) << c.seq;
    EXPECT_EQ(c.server.predicted_n, 32) << c.seq;
    ASSERT_TRUE(c.server.prompt_n) << c.seq;
    EXPECT_NEAR(*c.server.prompt_n, 256, 2) << c.seq;
    EXPECT_FALSE(c.nonce.empty());
    EXPECT_EQ(c.slots, 4);
    EXPECT_FALSE(c.expected_cache_n) << "no slot pinning on Ollama: no predicted reuse";
    ASSERT_TRUE(c.stream.has_value());
    streams.insert(*c.stream);
  }
  EXPECT_EQ(streams, (std::set<int>{0, 1, 2, 3}));
  // The first four calls are in flight at once: each is sent before any of them ends.
  const auto sent = by_send(calls);
  double earliest_end = ended_s(sent[0]);
  for (std::size_t i = 0; i < 4; ++i) {
    earliest_end = std::min(earliest_end, ended_s(sent[i]));
    EXPECT_EQ(sent[i].in_flight, static_cast<int>(i) + 1);
  }
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_LT(sent[i].t_start_s, earliest_end) << "call " << i;
  }
  const auto& stats = blocks[4]["concurrency"];
  EXPECT_EQ(stats["calls"], 8);
  EXPECT_EQ(stats["ok"], 8);
  EXPECT_EQ(stats["refused"], 0);
  EXPECT_EQ(stats["max_in_flight"], 4);
  EXPECT_GT(stats["decode_tok_per_s"].get<double>(), 0);
  EXPECT_GT(stats["prompt_tok_per_s"].get<double>(), 0);
  EXPECT_EQ(stats["ttft_ms"]["n"], 8);
  EXPECT_EQ(blocks[4]["server_queue"]["served_at_once"], 4) << "four slots served four calls";
  EXPECT_THAT(r.out, HasSubstr("## Concurrency"));
  EXPECT_THAT(r.out, HasSubstr("OLLAMA_NUM_PARALLEL was 4 (set by kvbench)"));
  // The memory report counts four slots' cells: the /api/ps sizes of 1 x 1024 and 4 x 1024 cells
  // give f16's bytes per token.
  EXPECT_THAT(r.out, HasSubstr("- Ollama's /api/ps size after load: **f16 = bf16** explains the "
                               "slope (slope / arithmetic = 1.000"));
}

TEST(OllamaConcurrency, AttachedServerWithFewerSlotsQueuesTheRestAndTheReportSaysSo) {
  OllamaFixtureServer fixture({{"OLLAMA_NUM_PARALLEL", "2"}}, "fixture-conc-np2.log");
  const fs::path dir = fresh_dir("ollama-conc-attached");
  const auto scenario = write_file(
      dir, "s.json",
      concurrency_scenario(
          "queue", {{"kind", "ollama"}, {"model", "synthetic-small"}, {"url", fixture.url()}}, 4,
          8));
  const auto r =
      run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q", "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("OLLAMA_NUM_PARALLEL, default 1) is a server setting kvbench can "
                               "neither set nor read"));
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  ASSERT_EQ(run["blocks"].size(), 1U);
  const auto& block = run["blocks"][0];
  EXPECT_TRUE(block["num_parallel"].is_null()) << "attached: unknown, not assumed";
  // /api/ps reports the server's two slots: weights (16 MiB) and buffers (4 MiB) of the fixture's
  // synthetic-small, and a KV cache of 2 x 1024 tokens.
  EXPECT_EQ(block["memory"]["size_bytes"].get<std::int64_t>(),
            (16 << 20) + (4 << 20) + 2 * 1024 * kF16BytesPerToken);
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 8U);
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_EQ(c.client.tokens, 32) << c.seq;
  }
  // The first four go out together; the server reads two and queues two until a slot frees.
  auto first = by_send(calls);
  first.resize(4);
  std::sort(first.begin(), first.end(),
            [](const auto& a, const auto& b) { return *a.client.ttft_ms < *b.client.ttft_ms; });
  EXPECT_GT(*first[2].client.ttft_ms, 1.5 * *first[1].client.ttft_ms)
      << "a queued call's TTFT includes a whole call of waiting";
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(first[i].server.raw.contains("load_duration"), i >= 2)
        << "only the queued calls report load_duration (Ollama counts the queue as loading); "
        << "call " << i;
  }
  const auto& q = block["server_queue"];
  EXPECT_GE(q["waited"].get<int>(), 2) << q.dump();
  EXPECT_GE(q["served_at_once"].get<int>(), 2) << q.dump();
  EXPECT_LT(q["served_at_once"].get<int>(), 4) << q.dump();
  EXPECT_EQ(q["max_in_flight"], 4);
  EXPECT_GE(q["load_duration_reported"].get<int>(), 2);
  EXPECT_THAT(r.out, HasSubstr("calls waited inside the server before it read them"));
  EXPECT_THAT(r.out, HasSubstr("kvbench attached and could not set OLLAMA_NUM_PARALLEL"));
  EXPECT_THAT(r.out, HasSubstr("Ollama counts waiting in its queue as loading"));
}

TEST(OllamaConcurrency, FullQueueRefusesWith503AndTheRunCompletes) {
  OllamaFixtureServer fixture({{"OLLAMA_NUM_PARALLEL", "1"}, {"OLLAMA_MAX_QUEUE", "1"}},
                              "fixture-conc-queue1.log");
  const fs::path dir = fresh_dir("ollama-conc-full");
  const auto scenario = write_file(
      dir, "s.json",
      concurrency_scenario(
          "full", {{"kind", "ollama"}, {"model", "synthetic-small"}, {"url", fixture.url()}}, 4,
          8));
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  // Refused calls are measurements, recorded call by call; more than 10 % of them leave the run
  // short of its plan, which the exit code says.
  ASSERT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("of 8 timed calls failed"));
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["status"], "complete");
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 8U);
  int ok = 0;
  int refused = 0;
  for (const auto& c : calls) {
    if (c.ok()) {
      ++ok;
      EXPECT_EQ(c.client.tokens, 32);
      continue;
    }
    ++refused;
    EXPECT_EQ(c.outcome, kvbench::Outcome::http_error) << c.seq;
    EXPECT_EQ(c.http_status, 503) << c.seq;
    EXPECT_THAT(c.error, HasSubstr("server busy, please try again.  maximum pending requests "
                                   "exceeded"));
    EXPECT_EQ(c.client.tokens, 0);
  }
  // Of the first four sent at once, one is read, one waits and two find the queue full.
  EXPECT_GE(refused, 2);
  EXPECT_GE(ok, 2);
  const auto& stats = run["blocks"][0]["concurrency"];
  EXPECT_EQ(stats["calls"], 8);
  EXPECT_EQ(stats["ok"], ok);
  EXPECT_EQ(stats["refused"], refused);
  EXPECT_EQ(stats["failed"], 0);
  EXPECT_EQ(run["summary"]["failed"], refused);
}

TEST(OllamaConcurrency, CapacityStartsAFreshServePerLevelWithThatManySlots) {
  const fs::path dir = fresh_dir("ollama-capacity");
  const auto r = run_kvbench({"capacity",
                              "--kind",
                              "ollama",
                              "--model",
                              "synthetic-small",
                              "--ctx",
                              "1024",
                              "--prompt-tokens",
                              "64",
                              "--max-tokens",
                              "8",
                              "--ttft-p90-ms",
                              "60000",
                              "--max",
                              "2",
                              "--rounds",
                              "2",
                              "--results",
                              (dir / "results").string(),
                              "-q",
                              "--server-bin",
                              KVBENCH_OLLAMA_FIXTURE});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path cap_dir = only_run_dir(dir / "results");
  const auto cap = read_json(cap_dir / "capacity.json");
  EXPECT_EQ(cap["status"], "complete");
  EXPECT_EQ(cap["request"]["kind"], "ollama");
  EXPECT_EQ(cap["answer"], 2);
  EXPECT_EQ(cap["at_max"], true);
  // Levels 1 and 2, then level 2 (the answer) once more for the boundary's CI.
  ASSERT_EQ(cap["levels"].size(), 3U);
  EXPECT_EQ(cap["levels"][2]["level"], 2);
  EXPECT_EQ(cap["levels"][2]["replicate"], 1);
  EXPECT_EQ(cap["boundary"]["position"], "above the measured levels");
  std::map<int, std::int64_t> size;
  for (const auto& level : cap["levels"]) {
    const int n = level["level"].get<int>();
    const auto run = read_json(cap_dir / level["run_dir"].get<std::string>() / "run.json");
    EXPECT_EQ(run["server"]["kind"], "ollama");
    EXPECT_EQ(run["blocks"][0]["env"]["OLLAMA_NUM_PARALLEL"], std::to_string(n));
    EXPECT_EQ(level["concurrency"]["calls"], 2 * n);
    EXPECT_EQ(level["concurrency"]["ok"], 2 * n);
    EXPECT_EQ(level["block"]["num_parallel"], n);
    size[n] = level["block"]["ps_size_bytes"].get<std::int64_t>();
  }
  EXPECT_EQ(size[2] - size[1], 1024 * kF16BytesPerToken);
  EXPECT_THAT(r.out, HasSubstr("Ollama's /api/ps size was"));
  EXPECT_THAT(r.out, HasSubstr("KV arithmetic: 2 conversations of 1024 tokens need"));

  const auto synthetic =
      run_kvbench({"capacity", "--kind", "ollama", "--results", (dir / "bad").string(),
                   "--server-bin", KVBENCH_OLLAMA_FIXTURE});
  EXPECT_EQ(synthetic.exit_code, 2);
  EXPECT_THAT(synthetic.err,
              HasSubstr("--model: a managed 'ollama' server runs the model each request names"));
  EXPECT_FALSE(fs::exists(dir / "bad"));
}

}  // namespace
}  // namespace kvbench::itest
