#include <algorithm>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/load/arrivals.h"
#include "harness/load/block_stats.h"
#include "harness/plan/plan.h"
#include "harness/scenario/scenario.h"

namespace kvbench::load {
namespace {

TEST(PoissonArrivals, AreSeededAscendingAndAverageTheRate) {
  const auto a = poisson_arrivals_s(7, 20000, 4.0);
  EXPECT_EQ(a, poisson_arrivals_s(7, 20000, 4.0));
  EXPECT_NE(a, poisson_arrivals_s(8, 20000, 4.0));
  ASSERT_EQ(a.size(), 20000U);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_GT(a.front(), 0.0);
  EXPECT_NEAR(a.back() / 20000.0, 0.25, 0.01);  // mean gap 1/rate; sd of the mean 0.0018
}

CallRecord call(double start_s, double e2e_ms, std::vector<double> token_ms, int in_flight) {
  CallRecord r;
  r.kind = kvbench::CallKind::timed;
  r.t_start_s = start_s;
  r.client.e2e_ms = e2e_ms;
  r.client.ttft_ms = token_ms.front();
  r.client.tokens = static_cast<int>(token_ms.size());
  r.client.token_ms = std::move(token_ms);
  r.server.prompt_n = 10;
  r.in_flight = in_flight;
  return r;
}

TEST(BlockStats, AddsUpThroughputOverTheSpanAndCountsRefusals) {
  std::vector<CallRecord> rs = {call(1.0, 1000, {100, 200, 400}, 1),
                                call(1.5, 1500, {300, 400, 500}, 2)};
  CallRecord refused;
  refused.kind = kvbench::CallKind::timed;
  refused.t_start_s = 1.2;
  refused.outcome = kvbench::Outcome::http_error;
  refused.http_status = 503;
  rs.push_back(refused);
  CallRecord warm = call(0.0, 100, {10, 20}, 1);
  warm.kind = kvbench::CallKind::warmup;
  rs.push_back(warm);
  const nlohmann::json s = block_stats(rs);
  EXPECT_EQ(s["calls"], 3);
  EXPECT_EQ(s["ok"], 2);
  EXPECT_EQ(s["refused"], 1);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_EQ(s["max_in_flight"], 2);
  EXPECT_DOUBLE_EQ(s["span_s"].get<double>(), 2.0);             // 1.0 to 3.0
  EXPECT_DOUBLE_EQ(s["prompt_tok_per_s"].get<double>(), 10.0);  // 20 tokens / 2 s
  EXPECT_DOUBLE_EQ(s["decode_tok_per_s"].get<double>(), 3.0);   // 6 tokens / 2 s
  EXPECT_DOUBLE_EQ(s["ttft_ms"]["p50"].get<double>(), 200.0);
  EXPECT_EQ(s["itl_ms"]["n"], 4);  // gaps 100, 200, 100, 100
  EXPECT_DOUBLE_EQ(s["itl_ms"]["p50"].get<double>(), 100.0);
}

TEST(ConcurrencyScenario, StreamLevelsBecomeBlocksWithThatManySlots) {
  const auto s = scenario::parse_scenario(
      R"({"name": "c", "factors": {"prompt_tokens": [64]}, "concurrency": {"streams": [1, 4]}})",
      "c.json");
  EXPECT_EQ(s.concurrency.streams, (std::vector<int>{1, 4}));
  EXPECT_EQ(scenario::to_json(s)["concurrency"]["streams"], nlohmann::json({1, 4}));
  const auto p = plan::make_plan(s);
  ASSERT_EQ(p.blocks.size(), 2U);
  std::vector<int> slots = {p.blocks[0].config.slots, p.blocks[1].config.slots};
  std::sort(slots.begin(), slots.end());
  EXPECT_EQ(slots, (std::vector<int>{1, 4}));
}

TEST(ConcurrencyScenario, RefusesARateWithoutACapAndBothModesAtOnce) {
  EXPECT_THROW(scenario::parse_scenario(R"({"name": "c", "factors": {"prompt_tokens": [64]},
                                            "concurrency": {"rate_per_s": 2}})",
                                        "c.json"),
               InputError);
  EXPECT_THROW(scenario::parse_scenario(R"({"name": "c", "factors": {"prompt_tokens": [64]},
                                            "concurrency": {"streams": [2], "rate_per_s": 2}})",
                                        "c.json"),
               InputError);
  const auto s = scenario::parse_scenario(R"({"name": "c", "factors": {"prompt_tokens": [64]},
      "concurrency": {"rate_per_s": 2.5, "max_in_flight": 8}})",
                                          "c.json");
  EXPECT_EQ(s.concurrency.slot_levels(), (std::vector<int>{8}));
}

}  // namespace
}  // namespace kvbench::load
