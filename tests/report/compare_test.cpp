// kvbench compare: medians per condition of two runs, B / A with a bootstrap interval, and what
// differs between the runs.

#include "harness/report/compare.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvbench::report {
namespace {

using ::testing::HasSubstr;

// A fresh timed call of `tokens` prompt tokens whose TTFT and prompt time are `ms`.
CallRecord timed_call(int seq, int tokens, double ms) {
  CallRecord r;
  r.seq = seq;
  r.kind = CallKind::timed;
  r.num_ctx = 4096;
  r.cache_type = "f16";
  r.prompt_tokens = tokens;
  r.client.ttft_ms = ms;
  r.server.prompt_ms = ms - 2;
  return r;
}

results::LoadedRun run_of(const std::string& id, const std::string& version, double scale,
                          const std::vector<int>& lengths) {
  results::LoadedRun run;
  run.run.run_id = id;
  run.run.server = {{"kind", "llama-server"}, {"mode", "managed"}, {"version", version}};
  int seq = 0;
  for (const int tokens : lengths) {
    for (int i = 0; i < 12; ++i) {  // a spread of about 2 %
      run.calls.push_back(timed_call(seq++, tokens, scale * tokens * (1.0 + 0.004 * (i % 5))));
    }
  }
  return run;
}

TEST(Compare, MediansRatioAndIntervalPerConditionAndWhatDiffers) {
  const auto a = run_of("aaa", "version: 1", 1.0, {256, 1024});
  auto b = run_of("bbb", "version: 2", 1.5, {256, 2048});
  b.run.labels = {{"host", "ci-7"}};
  const Comparison c = compare_runs(a, "runs/a", b, "runs/b");
  ASSERT_EQ(c.rows.size(), 2U) << "TTFT and server prompt time at the one shared condition";
  for (const auto& r : c.rows) {
    EXPECT_EQ(r.prompt_tokens, 256);
    EXPECT_EQ(r.n_a, 12U);
    ASSERT_TRUE(r.ratio && r.ratio_ci) << r.metric;
    EXPECT_NEAR(*r.ratio, 1.5, 0.02) << r.metric;
    EXPECT_LT(r.ratio_ci->lower, 1.5) << r.metric;
    EXPECT_GT(r.ratio_ci->upper, 1.49) << r.metric;
    EXPECT_GT(r.ratio_ci->lower, 1.4) << "a 2 % spread gives a narrow interval";
  }
  EXPECT_THAT(
      c.differences,
      ::testing::Contains(HasSubstr("server version: version: 1 (A) against version: 2 (B)")));
  EXPECT_THAT(c.differences, ::testing::Contains(HasSubstr("labels: - (A) against host=ci-7 (B)")));
  EXPECT_THAT(c.only_in_a, ::testing::ElementsAre("num_ctx 4096, f16, 1024 prompt tokens"));
  EXPECT_THAT(c.only_in_b, ::testing::ElementsAre("num_ctx 4096, f16, 2048 prompt tokens"));

  std::ostringstream md;
  write_compare_markdown(md, c);
  EXPECT_THAT(md.str(), HasSubstr("## kvbench compare (descriptive, not a test)"));
  EXPECT_THAT(md.str(),
              HasSubstr("| 4096 | f16 | 256 | TTFT ms | 257.54 (12) | 386.30 (12) | 1.500 ["));
  const auto j = to_json(c);
  EXPECT_EQ(j["schema"], "kvbench.compare");
  EXPECT_EQ(j["descriptive"], true);
  EXPECT_EQ(j["rows"].size(), 2U);
  // The bootstrap is seeded: the same runs give the same intervals.
  const Comparison again = compare_runs(a, "runs/a", b, "runs/b");
  EXPECT_EQ(again.rows[0].ratio_ci->lower, c.rows[0].ratio_ci->lower);
}

TEST(Compare, ARunAgainstItselfDiffersInNothingAndHasRatioOne) {
  const auto a = run_of("aaa", "version: 1", 1.0, {512});
  const Comparison c = compare_runs(a, "x", a, "x");
  EXPECT_TRUE(c.differences.empty());
  for (const auto& r : c.rows) {
    EXPECT_DOUBLE_EQ(*r.ratio, 1.0);
  }
  std::ostringstream md;
  write_compare_markdown(md, c);
  EXPECT_THAT(md.str(), HasSubstr("the same kvbench, server, model, machine, scenario and labels"));
}

}  // namespace
}  // namespace kvbench::report
