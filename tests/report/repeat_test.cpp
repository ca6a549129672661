#include "harness/report/repeat.h"

#include <sstream>

#include <gtest/gtest.h>

#include "harness/core/error.h"

namespace kvbench::report {
namespace {

analysis::Effect effect(const std::string& metric, bool relative, double estimate, double se) {
  analysis::Effect e;
  e.metric = metric;
  e.term = "prompt_ktokens";
  e.unit = relative ? "% per 1,000 prompt tokens" : "ms per 1,000 prompt tokens";
  e.relative = relative;
  e.estimate = estimate;
  e.se = se;
  e.df = 10;
  return e;
}

// Runs whose TTFT in ms moves with the machine (400, 500, 600, 700 with SEs of 10) while its
// relative form stays within its SEs (40 ± 2); decode's relative form only in the first run.
std::vector<RepeatRun> runs() {
  std::vector<RepeatRun> out;
  const double relative[] = {40, 42, 39, 41};
  for (int i = 0; i < 4; ++i) {
    RepeatRun r;
    r.dir = "run" + std::to_string(i);
    r.scenario_hash = "fnv1a64:1";
    r.effects.effects.push_back(effect("ttft_ms", false, 400 + 100 * i, 10));
    r.effects.effects.push_back(effect("ttft_ms", true, relative[i], 2));
    if (i == 0) {
      r.effects.effects.push_back(effect("decode_tps", true, -5, 1));
    }
    out.push_back(std::move(r));
  }
  return out;
}

TEST(Repeat, GivesEachEffectOverTheRunsAndJudgesTheRelativeOnes) {
  const auto r = repeat_report("s", runs());
  ASSERT_EQ(r.effects.size(), 2U);
  const auto& ms = r.effects[0];
  const auto& rel = r.effects[1];
  EXPECT_EQ(ms.unit, "ms per 1,000 prompt tokens");
  EXPECT_EQ(ms.estimates, (std::vector<double>{400, 500, 600, 700}));
  EXPECT_DOUBLE_EQ(ms.across.mean, 550);
  EXPECT_FALSE(ms.judged());
  // The ms form moved by 10 SEs between runs: its Birge ratio and tau say so.
  EXPECT_GT(ms.across.birge, 5);
  EXPECT_NEAR(std::sqrt(ms.across.tau2), 129, 1);
  EXPECT_TRUE(rel.judged());
  EXPECT_EQ(r.judged, 1U);
  EXPECT_TRUE(rel.across.honest());
  EXPECT_TRUE(r.calibrated());
  // Decode's relative effect is in one run only: named, not compared.
  ASSERT_EQ(r.notes.size(), 1U);
  EXPECT_NE(r.notes[0].find("in 1 of 4 runs"), std::string::npos) << r.notes[0];
}

TEST(Repeat, ARelativeEffectThatMovesBeyondItsSesIsTooNarrow) {
  auto rs = runs();
  rs[2].effects.effects[1].estimate = 80;  // 20 SEs from the others
  const auto r = repeat_report("s", rs);
  EXPECT_FALSE(r.calibrated());
  std::ostringstream md;
  write_repeat_markdown(md, r);
  EXPECT_NE(md.str().find("too narrow"), std::string::npos) << md.str();
  EXPECT_EQ(to_json(r).at("calibrated"), false);
}

TEST(Repeat, TwoRunsOfDifferentResolvedScenariosAreNamed) {
  auto rs = runs();
  rs[3].scenario_hash = "fnv1a64:2";
  const auto r = repeat_report("s", rs);
  ASSERT_EQ(r.notes.size(), 2U);
  EXPECT_NE(r.notes[0].find("run3 ran another resolved scenario"), std::string::npos);
}

TEST(Repeat, SplitsAlphaOverTheJudgedEffects) {
  auto rs = runs();
  for (auto& run : rs) {
    run.effects.effects.push_back(effect("decode_tps", true, -5, 1));
  }
  const auto r = repeat_report("s", rs);
  EXPECT_EQ(r.judged, 2U);
  for (const auto& e : r.effects) {
    EXPECT_DOUBLE_EQ(e.across.alpha, 0.025);  // 5 % over the two judged
  }
  EXPECT_EQ(repeat_table(r).rows().size(), r.effects.size());
}

TEST(Repeat, NeedsTwoRuns) {
  EXPECT_THROW(repeat_report("s", {runs()[0]}), Error);
}

}  // namespace
}  // namespace kvbench::report
