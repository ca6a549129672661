// The headline effects at the level of their units (analysis/effects.h), on simulated runs of a
// machine that slows down in episodes and spikes: a restart-level factor (cache type) alternated
// over blocks A B B A, prompt lengths shuffled within rounds, a cache type whose cost per prompt
// token differs (an interaction), and a slow state that costs more at longer prompts (a state x
// length interaction). Every simulation is seeded, so the measured rates are the same on every
// run.

#include "harness/analysis/effects.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <gtest/gtest.h>

#include "harness/analysis/effects_verdict.h"
#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/stats/unit_fit.h"

namespace kvbench::analysis {
namespace {

// The planted truth, on the log scale of TTFT; lengths in thousands of prompt tokens.
constexpr double kSlopeF16 = 1.0;     // per 1,000 prompt tokens
constexpr double kSlopeQ8 = 1.15;     // q8_0 costs more per prompt token
constexpr double kLevelQ8 = -0.10;    // and less at no prompt at all
constexpr double kSlow = 0.30;        // log(1.35): the slow state at the middle length
constexpr double kSlowPerK = 0.05;    // the slow state costs more at longer prompts
constexpr double kSlowShare = 0.3;    // of the calls, in the long run
constexpr double kSpikeShare = 0.02;  // isolated x3 spikes
const std::vector<int> kLengths{256, 1024, 2048};
constexpr double kMeanK = (0.256 + 1.024 + 2.048) / 3;

struct Plan {
  int blocks = 8;
  int rounds = 6;       // per block
  double episode = 10;  // mean length of a slow stretch, in calls
  bool spikes = true;
  double slow_per_k = kSlowPerK;
};

// A run's timed calls: blocks A B B A B A A B of f16 and q8_0, each `rounds` shuffled rounds
// of the three lengths; a block's server draws its own level (3 %), a call its noise (3 %).
struct Run {
  std::vector<CallRecord> calls;
  std::vector<bool> slow;  // each call's state
  double slow_per_k = 0;
};

Run simulate_run(const Plan& p, Rng& rng) {
  boost::random::uniform_01<double> u;
  boost::random::normal_distribution<double> noise(0.0, 0.03);
  const double leave = 1.0 / p.episode;
  const double enter = leave * kSlowShare / (1 - kSlowShare);
  bool slow = u(rng) < kSlowShare;
  const bool q8_at[] = {false, true, true, false, true, false, false, true};
  Run run;
  run.slow_per_k = p.slow_per_k;
  auto& calls = run.calls;
  for (int b = 0; b < p.blocks; ++b) {
    const bool q8 = q8_at[b % 8];
    const double server = noise(rng);
    for (int r = 0; r < p.rounds; ++r) {
      std::vector<int> order = kLengths;
      shuffle(order.begin(), order.end(), rng);
      for (const int len : order) {
        slow = slow ? u(rng) >= leave : u(rng) < enter;
        const double k = len / 1000.0;
        double log_t = 4.0 + (q8 ? kLevelQ8 + kSlopeQ8 * k : kSlopeF16 * k) + server + noise(rng);
        log_t += slow ? kSlow + p.slow_per_k * (k - kMeanK) : 0.0;
        run.slow.push_back(slow);
        log_t += p.spikes && u(rng) < kSpikeShare ? std::log(3.0) : 0.0;
        CallRecord c;
        c.seq = static_cast<int>(calls.size());
        c.block = b;
        c.round = r;
        c.kind = CallKind::timed;
        c.prompt_tokens = len;
        c.num_ctx = 4096;
        c.cache_type = q8 ? "q8_0" : "f16";
        c.client.ttft_ms = std::exp(log_t);
        calls.push_back(c);
      }
    }
  }
  return run;
}

std::vector<CallRecord> simulate(const Plan& p, Rng& rng) {
  return simulate_run(p, rng).calls;
}

// This run's slope per 1,000 prompt tokens of one cache type on the log scale: where the slow
// state costs more at longer prompts, the slope at this run's share of slow calls. An estimate
// describes this run; the spread of that share between runs is the run-to-run component that
// several runs measure (`repeat`).
double run_slope(const Run& run, const std::string& cache_type, double planted) {
  double slow = 0;
  double n = 0;
  for (std::size_t i = 0; i < run.calls.size(); ++i) {
    if (run.calls[i].cache_type == cache_type) {
      slow += run.slow[i] ? 1 : 0;
      n += 1;
    }
  }
  return planted + run.slow_per_k * slow / n;
}

// The truth of each relative term (per cent): the slopes within rounds of this run (run_slope),
// the cache type's level over blocks in the long run, where it does not depend on the state.
std::map<std::string, double> truth(const Run& run) {
  const auto pct = [](double b) { return 100 * std::expm1(b); };
  std::map<std::string, double> t;
  const double f16 = run_slope(run, "f16", kSlopeF16);
  const double q8 = run_slope(run, "q8_0", kSlopeQ8);
  t["prompt_ktokens@cache_type=f16"] = pct(f16);
  t["prompt_ktokens@cache_type=q8_0"] = pct(q8);
  t["cache_type=q8_0:prompt_ktokens"] = pct(q8 - f16);
  for (const int len : kLengths) {
    t["cache_type=q8_0@prompt_tokens=" + std::to_string(len)] =
        pct(kLevelQ8 + (kSlopeQ8 - kSlopeF16) * len / 1000.0);
  }
  return t;
}

std::vector<const CallRecord*> pointers(const std::vector<CallRecord>& calls) {
  std::vector<const CallRecord*> out;
  for (const auto& c : calls) {
    out.push_back(&c);
  }
  return out;
}

const Effect* find(const Effects& e, const std::string& term, bool relative) {
  for (const auto& x : e.effects) {
    if (x.metric == "ttft_ms" && x.term == term && x.relative == relative) {
      return &x;
    }
  }
  return nullptr;
}

#if defined(KVBENCH_SANITIZED)
constexpr bool kJudged = false;
constexpr int kRuns = 40;
#else
constexpr bool kJudged = true;
constexpr int kRuns = 1000;
#endif

struct TermStats {
  bool over_starts = false;  // clustered by server start (block)
  int runs = 0;
  int covered = 0;
  double sum_error = 0;  // estimate - truth
  double sum_se = 0;
};

std::map<std::string, TermStats> replicate(const Plan& p, std::uint64_t seed) {
  Rng rng(seed);
  std::map<std::string, TermStats> out;
  for (int k = 0; k < kRuns; ++k) {
    const Run run = simulate_run(p, rng);
    const auto t = truth(run);
    const Effects e = estimate_effects(pointers(run.calls), "");
    for (const auto& [term, value] : t) {
      const Effect* x = find(e, term, true);
      if (x == nullptr) {
        continue;
      }
      auto& s = out[term];
      s.over_starts = x->cluster_unit == "block";
      ++s.runs;
      s.covered += x->ci.lower <= value && value <= x->ci.upper ? 1 : 0;
      s.sum_error += x->estimate - value;
      s.sum_se += x->se;
    }
  }
  return out;
}

TEST(EffectsCoverage, EveryHeadlineIntervalIsHonestUnderEpisodesAndSpikes) {
  for (const double episode : {3.0, 20.0, 60.0}) {
    Plan p;
    p.episode = episode;
    const auto stats = replicate(p, 20261203 + static_cast<std::uint64_t>(episode));
    for (const auto& [term, s] : stats) {
      const double coverage = static_cast<double>(s.covered) / s.runs;
      std::cout << "[ monte carlo ] episodes of " << episode << " calls, " << term << ": " << s.runs
                << " runs, coverage " << coverage << ", bias " << s.sum_error / s.runs
                << " (mean SE " << s.sum_se / s.runs << ")\n";
      if (!kJudged) {
        continue;
      }
      // Within rounds: 0.924-0.968 measured (Monte Carlo SE 0.007). Over blocks (a level, or a
      // slope on four server starts per setting): 0.945-0.990, conservative where slow
      // stretches outlast a block (20 and 60 calls against blocks of 18): blocks in the order
      // A B B A share the machine's state with their neighbours, which the truth of this run
      // holds and the t over blocks counts as error. Wider, never narrower.
      EXPECT_GE(coverage, 0.92) << term << " at episodes of " << episode;
      EXPECT_LE(coverage, s.over_starts ? 0.99 : 0.975) << term << " at episodes of " << episode;
    }
    if (kJudged) {
      // The interaction is planted large: every run finds it and gives the cache type at each
      // prompt length instead of a main effect averaged over it.
      EXPECT_EQ(stats.at("cache_type=q8_0:prompt_ktokens").runs, kRuns);
      EXPECT_GE(stats.at("cache_type=q8_0@prompt_tokens=256").runs, kRuns * 9 / 10);
    }
  }
}

TEST(EffectsCoverage, SpikesMoveNoHeadlineByATenthOfItsStandardError) {
  Plan p;
  p.episode = 3;
  const auto with = replicate(p, 7);
  for (const auto& [term, s] : with) {
    const double bias = s.sum_error / s.runs;
    const double se = s.sum_se / s.runs;
    std::cout << "[ monte carlo ] spikes at 2 %, " << term << ": bias " << bias << ", SE " << se
              << "\n";
    if (kJudged) {
      EXPECT_LT(std::abs(bias), se / 10) << term;
    }
  }
}

// A quiet run of one server (no restart-level factor) with one call slowed 2.7x, as the idle
// quick start saw: the rule names that call, and the slope is the quiet one.
TEST(Effects, OneSpikeIsNamedAndKeptOutOfTheFit) {
  Plan p;
  p.blocks = 1;
  p.rounds = 8;
  p.episode = 1e9;  // never slow: the chain starts fast or slow and stays
  p.spikes = false;
  Rng rng(3);
  auto calls = simulate(p, rng);
  for (auto& c : calls) {
    c.cache_type = "f16";
  }
  const Effects quiet = estimate_effects(pointers(calls), "");
  calls[13].client.ttft_ms = *calls[13].client.ttft_ms * 2.7;
  const Effects spiked = estimate_effects(pointers(calls), "");
  ASSERT_EQ(spiked.spikes.size(), 1U);
  EXPECT_EQ(spiked.spikes[0].metric, "ttft_ms");
  EXPECT_EQ(spiked.spikes[0].calls, 24U);
  EXPECT_EQ(spiked.spikes[0].seq, std::vector<int>{13});
  EXPECT_TRUE(quiet.spikes[0].seq.empty());
  const Effect* a = find(quiet, "prompt_ktokens", false);
  const Effect* b = find(spiked, "prompt_ktokens", false);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->df, 7.0) << "8 rounds: the spike's round keeps two calls";
  EXPECT_EQ(b->cluster_unit, "round");
  EXPECT_LT(std::abs(b->estimate - a->estimate), a->se) << "one spike does not move the slope";
  EXPECT_EQ(find(spiked, "cache_type=q8_0", true), nullptr);
}

// Two blocks per cache type: its blocks are its units, too few for an interval; the report is
// told how many blocks would give one. The slopes within rounds still have theirs.
TEST(Effects, ARestartLevelFactorOnTooFewBlocksGetsNoInterval) {
  Plan p;
  p.blocks = 4;
  p.spikes = false;
  Rng rng(5);
  const auto calls = simulate(p, rng);
  const Effects e = estimate_effects(pointers(calls), "");
  EXPECT_EQ(find(e, "cache_type=q8_0", true), nullptr);
  EXPECT_EQ(find(e, "cache_type=q8_0@prompt_tokens=256", true), nullptr);
  const auto withheld = std::find_if(e.withheld.begin(), e.withheld.end(), [](const auto& w) {
    return w.metric == "ttft_ms" && w.term == "cache_type=q8_0";
  });
  ASSERT_NE(withheld, e.withheld.end());
  EXPECT_EQ(withheld->blocks_needed, kMinBlocksPerLevel);
  EXPECT_NE(withheld->reason.find("2 block(s)"), std::string::npos) << withheld->reason;
  const Effect* slope = find(e, "prompt_ktokens@cache_type=q8_0", true);
  ASSERT_NE(slope, nullptr);
  EXPECT_EQ(slope->clusters, 12U) << "two q8_0 blocks of six rounds";
  EXPECT_EQ(slope->unit, "% per 1,000 prompt tokens");
}

// Without an interaction the cache type is one main effect over its eight blocks, t(8 - 2).
TEST(Effects, WithoutAnInteractionTheLevelIsOneEffectOverBlocks) {
  Plan p;
  p.spikes = false;
  Rng rng(11);
  auto calls = simulate(p, rng);
  for (auto& c : calls) {
    if (c.cache_type == "q8_0") {  // the same slope as f16: take the interaction out
      const double k = c.prompt_tokens / 1000.0;
      c.client.ttft_ms = *c.client.ttft_ms * std::exp(-(kSlopeQ8 - kSlopeF16) * k);
    }
  }
  const Effects e = estimate_effects(pointers(calls), "");
  const Effect* level = find(e, "cache_type=q8_0", true);
  ASSERT_NE(level, nullptr);
  EXPECT_EQ(level->df, 6.0);
  EXPECT_EQ(level->clusters, 8U);
  EXPECT_EQ(level->cluster_unit, "block");
  EXPECT_EQ(level->unit, "%");
  EXPECT_FALSE(level->se_inflation.has_value());
  EXPECT_LT(level->ci.lower, 100 * std::expm1(kLevelQ8) + 1e-9 + 10);
  nlohmann::json j = *level;
  EXPECT_EQ(j["ci"]["level"], 0.95);
  EXPECT_EQ(j["term"], "cache_type=q8_0");
  EXPECT_TRUE(j["se_inflation"].is_null());
}

// The verdict's axes on simulated runs without spikes: how often each says "not quite" or
// "found" (200 runs each; 50 under the sanitizers, printed and not judged).
struct AxisRates {
  double honest = 0;     // runs whose honest axis is not ok
  double structure = 0;  // runs with a state x length finding
  double step = 0;       // runs where a block's rounds changed level once and stayed
};

AxisRates axis_rates(double episode, double slow_per_k, std::uint64_t seed) {
  Plan p;
  p.episode = episode;
  p.slow_per_k = slow_per_k;
  p.spikes = false;
  Rng rng(seed);
  const int runs = kJudged ? 200 : 50;
  AxisRates r;
  for (int k = 0; k < runs; ++k) {
    const auto calls = simulate(p, rng);
    const Effects e = estimate_effects(pointers(calls), "");
    const EffectsVerdict v = judge_effects(e);
    r.honest += v.honest.ok ? 0 : 1.0 / runs;
    const bool state =
        std::any_of(v.structure.findings.begin(), v.structure.findings.end(),
                    [](const auto& f) { return f.find("fast and slow") != std::string::npos; });
    r.structure += state ? 1.0 / runs : 0;
    const bool step = std::any_of(e.round_levels.begin(), e.round_levels.end(),
                                  [](const auto& l) { return l.step.has_value(); });
    r.step += step ? 1.0 / runs : 0;
  }
  return r;
}

TEST(EffectsVerdict, StructureIsFoundWhereTheSlowStateCostsMorePerToken) {
  const AxisRates none = axis_rates(3, 0.0, 31);
  const AxisRates planted = axis_rates(3, 0.4, 32);
  const AxisRates long_episodes = axis_rates(60, 0.0, 33);
  std::cout << "[ monte carlo ] state x length finding: " << none.structure << " without, "
            << planted.structure
            << " with a planted one; rounds' levels correlated: " << none.honest
            << " at episodes of 3 calls, " << long_episodes.honest
            << " at 60; a step in a block: " << none.step << " at episodes of 3 calls, "
            << long_episodes.step << " at 60\n";
  if (!kJudged) {
    return;
  }
  // Two cache types, each judged at 5 %: at most about 10 % of runs without a planted
  // interaction (measured 0.045), 0.995 with one.
  EXPECT_LT(none.structure, 0.12);
  EXPECT_GT(planted.structure, 0.8);
  // Episodes of 60 calls outlast rounds of 3 by far; episodes of 3 rarely do. Measured: 0.045
  // and 0.37 (blocks of 6 rounds, each block's mean removed, leave short stretches to see).
  EXPECT_LT(none.honest, 0.12);
  EXPECT_GT(long_episodes.honest, 0.25);
  // Slow episodes that come and go are noise, not a lasting change of speed: a step is judged at
  // 1 % over the blocks and needs 50 % (measured 0 at both lengths of episode).
  EXPECT_LT(none.step, 0.03);
  EXPECT_LT(long_episodes.step, 0.03);
}

TEST(EffectsVerdict, SaysWhatPrecisionTheRunHasAndWhatWouldNarrowIt) {
  Plan p;
  p.spikes = false;
  p.episode = 3;
  Rng rng(41);
  const auto calls = simulate(p, rng);
  const EffectsVerdict v = judge_effects(estimate_effects(pointers(calls), ""));
  ASSERT_TRUE(v.present);
  EXPECT_TRUE(v.precise.ok) << "a planted slope of +172 % per 1,000 tokens is resolved";
  ASSERT_EQ(v.precise.findings.size(), 2U) << "one slope per cache type, TTFT only";
  // Four server starts per cache type: each slope rests on its starts, not its 24 rounds.
  EXPECT_NE(v.precise.findings[0].find("over 4 server starts"), std::string::npos)
      << v.precise.findings[0];
  EXPECT_NE(v.precise.findings[0].find("12 more server starts"), std::string::npos);
  nlohmann::json j = v;
  EXPECT_TRUE(j["precise"]["ok"].get<bool>());
  EXPECT_TRUE(j["honest"]["findings"].is_array());
  EXPECT_FALSE(judge_effects(Effects{}).present);
}

TEST(UnitFit, RefusesWhatItCannotEstimate) {
  Eigen::MatrixXd x(4, 2);
  x << 1, 1, 2, 4, 1, 2, 2, 3;
  Eigen::VectorXd y(4);
  y << 1, 2, 1.1, 2.2;
  EXPECT_THROW(stats::unit_fit(x, y, {0, 0, 0, 0}), Error) << "one unit";
  EXPECT_THROW(stats::unit_fit(x, y, {0, 0, 1, 1}), Error) << "no residual degrees of freedom";
  Eigen::MatrixXd flat(6, 1);
  flat << 1, 1, 1, 2, 2, 2;
  Eigen::VectorXd z(6);
  z << 1, 2, 3, 4, 5, 6;
  EXPECT_THROW(stats::unit_fit(flat, z, {0, 0, 0, 1, 1, 1}), Error) << "no variation within units";
}

}  // namespace
}  // namespace kvbench::analysis
