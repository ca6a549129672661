#include "harness/report/capacity.h"

#include <sstream>

#include <gtest/gtest.h>

namespace kvbench::report {
namespace {

using nlohmann::json;

// A model of 4 layers with 4 KV heads of 64 numbers (q8_0: 34 bytes per 32
// numbers, so 2 x 4 x 4 x 64 x 34/32 = 2176 bytes per token).
json capacity(int answer, bool at_max) {
  json c = {
      {"kind", "capacity"},
      {"status", "complete"},
      {"request",
       {{"ctx", 2048},
        {"cache_type", "q8_0"},
        {"prompt_tokens", 512},
        {"ttft_p90_ms", 2000.0},
        {"max", 8},
        {"rounds", 3},
        {"max_tokens", 16},
        {"model", "synthetic:small"}}},
      {"model",
       {{"shape", {{"n_layer", 4}, {"n_head_kv", 4}, {"head_dim_k", 64}, {"head_dim_v", 64}}}}},
      {"answer", answer},
      {"at_max", at_max},
      {"first_failed", at_max ? json(nullptr) : json(answer + 1)},
      {"levels", json::array()}};
  json level = {{"level", 4},
                {"run_dir", "20250101-000000-capacity-n4"},
                {"passed", true},
                {"verdict", "passed: p90 812.4 ms < 2000 ms"},
                {"concurrency",
                 {{"calls", 12},
                  {"ok", 12},
                  {"refused", 0},
                  {"prompt_tok_per_s", 1000.0},
                  {"decode_tok_per_s", 50.0},
                  {"ttft_ms", {{"p50", 700.0}, {"p90", 812.4}, {"p99", 900.0}}}}},
                {"block", {{"kv_bytes_logged", 17825792}, {"peak_rss_bytes", 104857600}}}};
  c["levels"].push_back(level);
  return c;
}

TEST(CapacityReport, KvArithmeticOfTheAnswer) {
  const json c = capacity(4, false);
  EXPECT_EQ(capacity_kv_bytes(c, 4), 4U * 2048U * 2176U);
  EXPECT_EQ(capacity_kv_sentence(c, 4),
            "KV arithmetic: 4 conversations of 2048 tokens need 17.00 MiB of KV cache at q8_0 "
            "with this model (8192 cells x 2176 bytes per token).");
  EXPECT_EQ(capacity_kv_sentence(c, 1).substr(0, 44),
            "KV arithmetic: 1 conversation of 2048 tokens");
}

TEST(CapacityReport, AnswerBesideTheArithmeticAndTheMeasuredBuffer) {
  std::ostringstream out;
  write_capacity_markdown(out, capacity(4, false));
  const std::string md = out.str();
  EXPECT_NE(md.find("**4 conversations** at once keep TTFT p90 under 2000 ms (5 failed)."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("need 17.00 MiB of KV cache at q8_0 with this model (8192 cells x 2176 bytes "
                    "per token). Measured at 4: the server logged 17.00 MiB of KV buffer, its "
                    "resident memory peaked at 100.00 MiB."),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 4 | 12 / 12 | 0 | 700.0 / 812.4 / 900.0 | - / - / - | 1000.0 | 50.0 | "
                    "17.00 | 17.00 | 100.00 | passed: p90 812.4 ms < 2000 ms | "
                    "20250101-000000-capacity-n4 |"),
            std::string::npos)
      << md;
}

TEST(CapacityReport, ZeroAndMaxAnswersAreSaidPlainly) {
  std::ostringstream zero;
  write_capacity_markdown(zero, capacity(0, false));
  EXPECT_NE(zero.str().find("Not even one conversation keeps TTFT p90 under 2000 ms."),
            std::string::npos);
  EXPECT_NE(zero.str().find("KV arithmetic: 1 conversation of 2048 tokens"), std::string::npos);
  std::ostringstream max;
  write_capacity_markdown(max, capacity(8, true));
  EXPECT_NE(max.str().find("(the search stopped at --max 8; more may fit)"), std::string::npos)
      << max.str();
}

TEST(CapacityReport, NoShapeNoArithmetic) {
  json c = capacity(4, false);
  c.erase("model");
  EXPECT_FALSE(capacity_kv_bytes(c, 4).has_value());
  EXPECT_EQ(capacity_kv_sentence(c, 4),
            "KV arithmetic: not available (no model shape, or q8_0 does not fit it).");
}

}  // namespace
}  // namespace kvbench::report
