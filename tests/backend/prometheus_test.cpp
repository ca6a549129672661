#include "harness/backend/prometheus.h"

#include <gtest/gtest.h>

#include "tests/support/scripted_transport.h"

namespace kvbench::backend {
namespace {

TEST(ParsePrometheus, KnownCountersWithLabelsAndTimestampsOthersLeftOut) {
  const auto s = parse_prometheus(
      "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
      "# TYPE llamacpp:prompt_tokens_total counter\n"
      "llamacpp:prompt_tokens_total 6886\n"
      "llamacpp:prompt_seconds_total 2903.63\r\n"
      "vllm:prefix_cache_hits_total{model_name=\"m a\",engine=\"0\"} 1.5e3 1700000000\n"
      "process_cpu_seconds_total 12\n"
      "llamacpp:requests_processing NaN\n"
      "llamacpp:broken\n"
      "llamacpp:bad_value 12abc\n"
      "vllm:unclosed{x=\"1\" 3\n");
  EXPECT_EQ(s.size(), 3U) << s.dump();
  EXPECT_EQ(s["llamacpp:prompt_tokens_total"], 6886.0);
  EXPECT_DOUBLE_EQ(s["llamacpp:prompt_seconds_total"].get<double>(), 2903.63);
  EXPECT_EQ(s["vllm:prefix_cache_hits_total{model_name=\"m a\",engine=\"0\"}"], 1500.0);
  EXPECT_TRUE(parse_prometheus("").empty());
}

TEST(ScrapeMetrics, ErrorsAreData) {
  test_support::ScriptedTransport t;
  t.fetch_body = "llamacpp:prompt_tokens_total 5\n";
  const auto ok = scrape_metrics(t, "http://h", {{"Authorization", "Bearer k"}});
  EXPECT_EQ(ok.samples.at("llamacpp:prompt_tokens_total"), 5.0);
  EXPECT_EQ(t.last.url, "http://h/metrics");
  EXPECT_EQ(t.last.method, "GET");
  ASSERT_EQ(t.last.headers.size(), 1U);
}

}  // namespace
}  // namespace kvbench::backend
