#include "harness/gate/decision.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/gate/loop.h"
#include "simulated_run.h"

namespace kvbench::gate {
namespace {

using stats::Verdict;

// Plain C strings: a std::string made for the call would look, to GCC 14, like a temporary the
// returned reference might dangle from.
const GateEntry& entry(const RunGate& g, const char* metric, const char* candidate) {
  const auto it = std::find_if(g.entries.begin(), g.entries.end(), [&](const GateEntry& e) {
    return e.metric == metric && e.candidate == candidate;
  });
  EXPECT_NE(it, g.entries.end()) << metric << " " << candidate;
  return *it;
}

sim::RunShape quiet_shape() {
  sim::RunShape s;
  s.decode_cv = 0.02;
  s.ttft_cv = 0.03;
  return s;
}

TEST(GateRun, IdenticalVariantsPass) {
  const auto calls = sim::simulate_run(quiet_shape(), 11);
  const auto g = gate_run(calls, {}, {});
  EXPECT_EQ(g.baseline, "base");
  ASSERT_EQ(g.entries.size(), 2u);
  EXPECT_EQ(entry(g, "decode_tps", "cand").verdict, Verdict::pass);
  EXPECT_EQ(entry(g, "ttft_ms", "cand").verdict, Verdict::pass);
  EXPECT_EQ(entry(g, "decode_tps", "cand").n, 60u);  // A B B A: 4 blocks of 15 timed calls
  EXPECT_EQ(g.overall, Verdict::pass);
}

TEST(GateRun, SlowerDecodeFailsWithTheEffectInTheRightDirection) {
  auto shape = quiet_shape();
  shape.decode_ratio["cand"] = 0.80;
  const auto g = gate_run(sim::simulate_run(shape, 12), {}, {});
  const auto& d = entry(g, "decode_tps", "cand");
  EXPECT_EQ(d.verdict, Verdict::fail);
  ASSERT_TRUE(d.result);
  EXPECT_GT(d.result->slowdown_lower, 0.05);
  EXPECT_NEAR(d.result->slowdown, std::log(1 / 0.80), 0.02);
  EXPECT_EQ(entry(g, "ttft_ms", "cand").verdict, Verdict::pass);
  EXPECT_EQ(g.overall, Verdict::fail);
}

TEST(GateRun, FasterCandidatePasses) {
  auto shape = quiet_shape();
  shape.decode_ratio["cand"] = 1.25;
  shape.ttft_ratio["cand"] = 0.9;
  const auto g = gate_run(sim::simulate_run(shape, 13), {}, {});
  EXPECT_LT(entry(g, "decode_tps", "cand").result->slowdown_upper, -0.1);
  EXPECT_EQ(g.overall, Verdict::pass) << nlohmann::json(g).dump(1);
}

TEST(GateRun, SlowdownAtTheMarginIsInconclusive) {
  auto shape = quiet_shape();
  shape.decode_cv = 0.04;
  shape.decode_ratio["cand"] = 1 / 1.05;
  const auto g = gate_run(sim::simulate_run(shape, 14), {}, {});
  const auto& d = entry(g, "decode_tps", "cand");
  EXPECT_EQ(d.verdict, Verdict::inconclusive);
  EXPECT_LT(d.result->slowdown_lower, 0.05);
  EXPECT_GT(d.result->slowdown_upper, 0.05);
  EXPECT_EQ(g.overall, Verdict::inconclusive);
}

TEST(GateRun, HolmLevelsFollowTheOrderOfTheFailTests) {
  auto shape = quiet_shape();
  shape.decode_ratio["cand"] = 0.8;
  shape.ttft_ratio["cand"] = 1.3;
  const auto g = gate_run(sim::simulate_run(shape, 15), {}, {});
  const auto& d = *entry(g, "decode_tps", "cand").result;
  const auto& t = *entry(g, "ttft_ms", "cand").result;
  const auto& first = d.p_fail <= t.p_fail ? d : t;
  const auto& second = d.p_fail <= t.p_fail ? t : d;
  EXPECT_DOUBLE_EQ(first.holm_alpha, 0.025);
  EXPECT_DOUBLE_EQ(second.holm_alpha, 0.05);
  EXPECT_EQ(g.overall, Verdict::fail);
}

TEST(GateRun, HolmStopsAtTheFirstFailTestThatDoesNotReject) {
  auto shape = quiet_shape();
  shape.decode_ratio["cand"] = 0.8;  // TTFT identical: its FAIL test cannot reject
  const auto g = gate_run(sim::simulate_run(shape, 16), {}, {});
  EXPECT_DOUBLE_EQ(entry(g, "decode_tps", "cand").result->holm_alpha, 0.025);
  EXPECT_DOUBLE_EQ(entry(g, "ttft_ms", "cand").result->holm_alpha, 0.05);
}

TEST(GateRun, NoiseAloneNeverHoldsAPassBack) {
  auto shape = quiet_shape();
  shape.decode_cv = 0.12;  // residual CV far above the 5 % that once held a pass back
  scenario::GateConfig config;
  config.metrics = {{"decode_tps", 0.5, {}}};
  const auto g = gate_run(sim::simulate_run(shape, 17), config, {});
  const auto& d = entry(g, "decode_tps", "cand");
  EXPECT_TRUE(d.validity.empty()) << d.validity.front().message;
  EXPECT_EQ(d.result->verdict, Verdict::pass);
  EXPECT_EQ(d.verdict, Verdict::pass) << d.reason;
  EXPECT_EQ(g.overall, Verdict::pass);
}

TEST(GateRun, FailedCallsHoldAPassBack) {
  auto calls = sim::simulate_run(quiet_shape(), 17);
  for (std::size_t i = 0; i < calls.size(); i += 4) {
    if (calls[i].kind == CallKind::timed) {
      calls[i].outcome = Outcome::http_error;
    }
  }
  scenario::GateConfig config;
  config.metrics = {{"decode_tps", 0.5, {}}};
  const auto g = gate_run(calls, config, {});
  const auto& d = entry(g, "decode_tps", "cand");
  ASSERT_FALSE(d.validity.empty());
  EXPECT_EQ(d.validity.front().rule, "failed_calls");
  EXPECT_EQ(d.result->verdict, Verdict::pass);  // the numbers alone would pass
  EXPECT_EQ(d.verdict, Verdict::inconclusive);
  EXPECT_NE(d.reason.find("calls cannot carry it"), std::string::npos) << d.reason;
  EXPECT_EQ(g.overall, Verdict::inconclusive);
}

TEST(GateRun, WhereConditionsGateOnlyTheMatchingCalls) {
  auto f16 = quiet_shape();
  auto q8 = quiet_shape();
  q8.cache_type = "q8_0";
  q8.decode_ratio["cand"] = 0.8;
  auto calls = sim::simulate_run(f16, 18);
  for (auto& r : sim::simulate_run(q8, 19)) {
    r.t_start_s += 0.5;
    calls.push_back(r);
  }
  scenario::GateConfig config;
  config.metrics = {{"decode_tps", 0.05, {{"cache_type", "f16"}}},
                    {"decode_tps", 0.05, {{"cache_type", "q8_0"}}}};
  const auto g = gate_run(calls, config, {});
  ASSERT_EQ(g.entries.size(), 2u);
  EXPECT_EQ(g.entries[0].verdict, Verdict::pass);
  EXPECT_EQ(g.entries[0].n, 60u);
  EXPECT_EQ(g.entries[1].verdict, Verdict::fail);
  EXPECT_EQ(condition_label(g.entries[1].where), "cache_type=q8_0");
  EXPECT_EQ(g.overall, Verdict::fail);
}

TEST(GateRun, ThreeVariantsGateEachAgainstTheBaseline) {
  auto shape = quiet_shape();
  shape.variants = {"base", "same", "slow"};
  shape.decode_ratio["slow"] = 0.8;
  const auto g = gate_run(sim::simulate_run(shape, 20), {}, {"base", "same", "slow"});
  ASSERT_EQ(g.entries.size(), 4u);
  EXPECT_EQ(entry(g, "decode_tps", "same").verdict, Verdict::pass);
  EXPECT_EQ(entry(g, "decode_tps", "slow").verdict, Verdict::fail);
  EXPECT_EQ(entry(g, "ttft_ms", "slow").verdict, Verdict::pass);
  EXPECT_EQ(g.overall, Verdict::fail);
}

TEST(GateRun, NamedBaselineIsTheReference) {
  auto shape = quiet_shape();
  shape.decode_ratio["cand"] = 0.8;
  scenario::GateConfig config;
  config.baseline = "cand";
  const auto g = gate_run(sim::simulate_run(shape, 21), config, {});
  EXPECT_EQ(g.baseline, "cand");
  EXPECT_LT(entry(g, "decode_tps", "base").result->slowdown, -0.15);  // base is faster
}

TEST(GateRun, ConditionWithoutCallsIsInconclusiveWithTheReason) {
  scenario::GateConfig config;
  config.metrics = {{"decode_tps", 0.05, {{"prompt_tokens", "999"}}}, {"decode_tps", 0.05, {}}};
  const auto g = gate_run(sim::simulate_run(quiet_shape(), 22), config, {});
  EXPECT_EQ(g.entries[0].verdict, Verdict::inconclusive);
  EXPECT_FALSE(g.entries[0].result);
  EXPECT_FALSE(g.entries[0].reason.empty());
  EXPECT_EQ(g.entries[1].verdict, Verdict::pass);
  EXPECT_DOUBLE_EQ(g.entries[1].result->holm_alpha, 0.05);  // one test with numbers
  EXPECT_EQ(g.overall, Verdict::inconclusive);
}

TEST(GateRun, TooFewCallsAreInconclusive) {
  auto calls = sim::simulate_run(quiet_shape(), 23);
  calls.resize(4);  // a warm-up and three calls of the baseline, then one of the candidate
  calls.push_back(calls[3]);
  calls.back().variant = "cand";
  const auto g = gate_run(calls, {}, {"base", "cand"});
  EXPECT_EQ(g.entries[0].verdict, Verdict::inconclusive);
  EXPECT_NE(g.entries[0].reason.find("too few"), std::string::npos) << g.entries[0].reason;
}

TEST(GateRun, BadInputNamesTheField) {
  const auto calls = sim::simulate_run(quiet_shape(), 24);
  scenario::GateConfig config;
  config.metrics = {{"decode_rate", 0.05, {}}};
  EXPECT_THROW(gate_run(calls, config, {}), InputError);
  config.metrics = {{"decode_tps", 0.05, {{"threads", "4"}}}};
  try {
    gate_run(calls, config, {});
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gate.metrics[0].where"), std::string::npos);
  }
  config = {};
  config.baseline = "nope";
  EXPECT_THROW(gate_run(calls, config, {}), InputError);
  auto one = quiet_shape();
  one.variants = {"only"};
  EXPECT_THROW(gate_run(sim::simulate_run(one, 25), {}, {}), InputError);
}

RunGate verdict(Verdict v) {
  RunGate g;
  g.overall = v;
  return g;
}

TEST(GateLoop, ExtendsWhileInconclusiveUpToMaxSets) {
  std::vector<Verdict> answers{Verdict::inconclusive, Verdict::inconclusive, Verdict::pass};
  std::size_t asked = 0;
  int extended = 0;
  const auto r = gate_until_decided(
      1, 3, [&] { return verdict(answers.at(asked++)); }, [&] { ++extended; });
  EXPECT_EQ(r.gate.overall, Verdict::pass);
  EXPECT_EQ(r.sets, 3);
  EXPECT_EQ(r.extensions, 2);
  EXPECT_EQ(extended, 2);
}

TEST(GateLoop, StopsAtMaxSetsStillInconclusive) {
  int extended = 0;
  const auto r = gate_until_decided(
      1, 2, [&] { return verdict(Verdict::inconclusive); }, [&] { ++extended; });
  EXPECT_EQ(r.gate.overall, Verdict::inconclusive);
  EXPECT_EQ(r.sets, 2);
  EXPECT_EQ(extended, 1);
}

TEST(GateLoop, DecidedGateIsNotExtended) {
  int extended = 0;
  const auto r = gate_until_decided(
      1, 3, [&] { return verdict(Verdict::fail); }, [&] { ++extended; });
  EXPECT_EQ(r.gate.overall, Verdict::fail);
  EXPECT_EQ(extended, 0);
  EXPECT_EQ(r.sets, 1);
}

TEST(GateLoop, SpendsAlphaOverTheLooksItMayTake) {
  EXPECT_EQ(planned_looks(1, 3), 3);
  EXPECT_EQ(planned_looks(3, 3), 1);
  EXPECT_EQ(planned_looks(4, 3), 1);
  scenario::GateConfig c;
  EXPECT_DOUBLE_EQ(spend_alpha(c, 3).alpha, c.alpha / 3);
  EXPECT_DOUBLE_EQ(spend_alpha(c, 1).alpha, c.alpha);
}

// A slowdown of 2 % against a 5 % margin whose upper bound reaches 8 %: the bound must come in by
// (log 1.05 - log 1.02) / (log 1.08 - log 1.02), so the SE shrinks by that, as 1 / sqrt(sets).
TEST(GateLoop, SaysHowManySetsWouldDecideAnUndecidedEntry) {
  stats::GateResult r;
  r.margin = 0.05;
  r.slowdown = std::log(1.02);
  r.t_critical = 2.0;
  r.se = (std::log(1.08) - std::log(1.02)) / 2.0;
  const double factor =
      std::pow((std::log(1.08) - std::log(1.02)) / (std::log(1.05) - std::log(1.02)), 2);
  EXPECT_EQ(sets_to_decide(r, 2), static_cast<int>(std::ceil(2 * factor)));
  // A slowdown beyond the margin: sets until the lower bound clears it.
  r.slowdown = std::log(1.10);
  EXPECT_GE(sets_to_decide(r, 2).value_or(0), 3);
  // On the margin: no number of sets decides it.
  r.slowdown = std::log(1.05);
  EXPECT_FALSE(sets_to_decide(r, 2).has_value());
}

}  // namespace
}  // namespace kvbench::gate
