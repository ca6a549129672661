#include "harness/analysis/counters.h"

#include <gtest/gtest.h>

namespace kvbench::analysis {
namespace {

using nlohmann::json;

CallRecord call_in(int block, int prompt_n, int cache_n) {
  CallRecord r;
  r.block = block;
  r.server.prompt_n = prompt_n;
  r.server.cache_n = cache_n;
  return r;
}

TEST(Counters, BlockDeltasAgainstTheCallsOfThatBlock) {
  const json run = {
      {"blocks",
       json::array(
           {{{"index", 0},
             {"server_counters",
              {{"at_start", {{"samples", {{"llamacpp:prompt_tokens_total", 100.0}}}}},
               {"at_end", {{"samples", {{"llamacpp:prompt_tokens_total", 400.0}}}}}}}},
            {{"index", 1},
             {"server_counters",
              {{"at_start",
                {{"samples",
                  {{"vllm:prefix_cache_hits_total{model_name=\"a\"}", 10.0},
                   {"vllm:prefix_cache_hits_total{model_name=\"b\"}", 5.0},
                   {"vllm:prefix_cache_queries_total", 50.0}}}}},
               {"at_end",
                {{"samples",
                  {{"vllm:prefix_cache_hits_total{model_name=\"a\"}", 110.0},
                   {"vllm:prefix_cache_hits_total{model_name=\"b\"}", 5.0},
                   {"vllm:prefix_cache_queries_total", 350.0}}}}}}}},
            {{"index", 2}, {"server_counters", {{"at_start", {{"error", "HTTP 501"}}}}}}})}};
  const auto manifest = results::manifest_from_json(run, "run.json");
  const std::vector<CallRecord> calls = {call_in(0, 200, 1), call_in(0, 100, 16),
                                         call_in(1, 150, 100), call_in(1, 50, 0), call_in(2, 7, 0)};
  const auto checks = check_counters(manifest, calls);
  ASSERT_EQ(checks.size(), 3U);
  EXPECT_EQ(checks[0].metric, "llamacpp:prompt_tokens_total");
  EXPECT_EQ(checks[0].block, 0);
  EXPECT_DOUBLE_EQ(checks[0].server, 300);
  EXPECT_EQ(checks[0].calls, 300);
  EXPECT_TRUE(checks[0].agree());
  EXPECT_EQ(checks[1].metric, "vllm:prefix_cache_hits_total");
  EXPECT_DOUBLE_EQ(checks[1].server, 100) << "summed over label sets";
  EXPECT_EQ(checks[1].calls, 100);
  EXPECT_TRUE(checks[1].agree());
  EXPECT_EQ(checks[2].metric, "vllm:prefix_cache_queries_total");
  EXPECT_EQ(checks[2].calls, 300);
  EXPECT_TRUE(checks[2].agree());
  const std::vector<CallRecord> fewer = {call_in(0, 200, 1)};
  EXPECT_FALSE(check_counters(manifest, fewer)[0].agree()) << "a call the counter saw is missing";
}

}  // namespace
}  // namespace kvbench::analysis
