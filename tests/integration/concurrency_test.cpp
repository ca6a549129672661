// Concurrency on the real llama-server: four conversations in flight on four slots (-np 4), each
// record complete, the calls overlapping in time, the block's throughput and latency reported.

#include <algorithm>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;

double end_s(const CallRecord& c) {
  return c.t_start_s + c.client.e2e_ms.value_or(0) / 1000.0;
}

TEST(Concurrency, FourStreamsOnFourSlotsOverlapAndReportThroughput) {
  const fs::path dir = fresh_dir("concurrency");
  const auto scenario = write_file(dir, "conc.json", R"({
    "name": "conc", "server": {"model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [48], "num_ctx": [256]},
    "concurrency": {"streams": [4]}, "repeats": 8, "warmup": 0, "max_tokens": 8 })");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "results").string(), "-q",
                              "--server-bin", llama_server_path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "results");
  const auto run = read_json(run_dir / "run.json");
  ASSERT_EQ(run["blocks"].size(), 1U);
  const auto& block = run["blocks"][0];
  const auto& argv = block["argv"];
  const auto np = std::find(argv.begin(), argv.end(), "-np");
  ASSERT_NE(np, argv.end());
  EXPECT_EQ(*(np + 1), "4");
  const auto c = std::find(argv.begin(), argv.end(), "-c");
  ASSERT_NE(c, argv.end());
  EXPECT_EQ(*(c + 1), "1024") << "four slots of 256 tokens each";
  EXPECT_EQ(block["slots"], 4);
  EXPECT_EQ(block["slot_ctx"], 256);

  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 8U);
  std::set<int> streams;
  for (const auto& call : calls) {
    EXPECT_EQ(call.outcome, kvbench::Outcome::ok) << call.seq << ": " << call.error;
    EXPECT_EQ(call.client.tokens, 8) << call.seq;
    EXPECT_TRUE(call.client.ttft_ms.has_value()) << call.seq;
    EXPECT_EQ(call.server.predicted_n, 8) << call.seq;
    EXPECT_EQ(call.slots, 4);
    ASSERT_TRUE(call.stream.has_value());
    streams.insert(*call.stream);
    // Each stream has its own slot, so every prompt is read cold there.
    EXPECT_EQ(call.server.cache_n, call.expected_cache_n) << call.seq;
    EXPECT_TRUE(call.flags.empty()) << call.seq << ": " << call.flags.front();
  }
  EXPECT_EQ(streams, (std::set<int>{0, 1, 2, 3}));
  // The first four calls start together: each begins before any of them ends.
  std::vector<CallRecord> first(calls.begin(), calls.end());
  std::sort(first.begin(), first.end(),
            [](const auto& a, const auto& b) { return a.t_start_s < b.t_start_s; });
  const double earliest_end =
      end_s(*std::min_element(first.begin(), first.begin() + 4,
                              [](const auto& a, const auto& b) { return end_s(a) < end_s(b); }));
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT(first[static_cast<std::size_t>(i)].t_start_s, earliest_end) << "call " << i;
  }
  EXPECT_EQ(*std::max_element(calls.begin(), calls.end(),
                              [](const auto& a, const auto& b) {
                                return a.in_flight.value_or(0) < b.in_flight.value_or(0);
                              })
                 ->in_flight,
            4);

  const auto& stats = block["concurrency"];
  EXPECT_EQ(stats["calls"], 8);
  EXPECT_EQ(stats["ok"], 8);
  EXPECT_EQ(stats["refused"], 0);
  EXPECT_EQ(stats["max_in_flight"], 4);
  EXPECT_GT(stats["decode_tok_per_s"].get<double>(), 0);
  EXPECT_GT(stats["prompt_tok_per_s"].get<double>(), 0);
  EXPECT_EQ(stats["ttft_ms"]["n"], 8);
  std::size_t gaps = 0;
  for (const auto& call : calls) {
    gaps += call.client.token_ms.size() - 1;
  }
  EXPECT_EQ(stats["itl_ms"]["n"], gaps);
}

}  // namespace
}  // namespace kvbench::itest
