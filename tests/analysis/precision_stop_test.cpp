// Precision on demand stops on the width of the effect's interval at the level of its units
// (harness/precision): sets are added until the prompt slope's 95 % CI is within ± a target of its
// estimate. Stopping on the width, not on the estimate, keeps the coverage, also on a machine that
// slows down in episodes that outlast rounds and has isolated spikes.

#include <cmath>
#include <iostream>
#include <vector>

#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <gtest/gtest.h>

#include "harness/analysis/effects.h"
#include "harness/core/random.h"
#include "tests/support/replicates.h"

namespace kvbench::analysis {
namespace {

constexpr double kSlope = 400;  // ms per 1,000 prompt tokens, the truth
const std::vector<int> kStopLengths{256, 1024, 2048};

// One set: a block (one server start, its own speed: a factor on every call, 4 %) of 4 shuffled
// rounds of the three lengths;
// a slow state (+60 ms, Markov, episodes of 10 calls on average, 30 % of calls) that adds the same
// to every length, 4 % noise per call and 2 % isolated x3 spikes.
// Returns the block's speed factor.
double add_set(std::vector<CallRecord>& calls, bool& slow, Rng& rng) {
  boost::random::uniform_01<double> u;
  boost::random::normal_distribution<double> noise(0.0, 0.04);
  const int block = calls.empty() ? 0 : calls.back().block + 1;
  const double server = 1 + noise(rng);
  for (int r = 0; r < 4; ++r) {
    std::vector<int> order = kStopLengths;
    shuffle(order.begin(), order.end(), rng);
    for (const int len : order) {
      slow = slow ? u(rng) >= 0.1 : u(rng) < 0.1 * 0.3 / 0.7;
      double ms = (100 + kSlope * len / 1000.0) * server * (1 + noise(rng)) + (slow ? 60 : 0);
      ms *= u(rng) < 0.02 ? 3 : 1;
      CallRecord c;
      c.seq = static_cast<int>(calls.size());
      c.block = block;
      c.round = r;
      c.kind = CallKind::timed;
      c.prompt_tokens = len;
      c.num_ctx = 4096;
      c.cache_type = "f16";
      c.client.ttft_ms = ms;
      calls.push_back(c);
    }
  }
  return server;
}

const Effect* slope(const Effects& e) {
  for (const auto& x : e.effects) {
    if (x.metric == "ttft_ms" && x.term == "prompt_ktokens" && !x.relative) {
      return &x;
    }
  }
  return nullptr;
}

// 400 runs, each from 2 sets on until ±4 % or 10 sets. The truth is this run's slope: an effect in
// ms is about the server starts it measured, each of which scales it by its speed (the spread
// between runs is what `kvbench repeat` measures). The CI at the stop covers it at about its
// level (Monte Carlo SE 1.3 points). Measured: 0.9225 after 4.6 sets on average (from 4 sets on,
// each a server start, the slope is clustered by start); runs of a fixed 2 or 3 sets cover
// 0.89-0.91, so few rounds leave CR2 a little short and stopping on the width adds nothing to it.
TEST(PrecisionStop, StoppingOnTheClusteredWidthKeepsTheCoverage) {
  const int runs = test::replicates(400, 40);
  int covered = 0;
  int early = 0;
  double sets_used = 0;
  for (int i = 0; i < runs; ++i) {
    Rng rng(9000 + static_cast<std::uint64_t>(i));
    std::vector<CallRecord> calls;
    bool slow = false;
    double speed = add_set(calls, slow, rng);
    for (int sets = 2; sets <= 10; ++sets) {
      speed += add_set(calls, slow, rng);
      const double truth = kSlope * speed / sets;
      std::vector<const CallRecord*> timed;
      for (const auto& c : calls) {
        timed.push_back(&c);
      }
      const Effects e = estimate_effects(timed, "");
      const Effect* s = slope(e);
      ASSERT_NE(s, nullptr);
      const double half = (s->ci.upper - s->ci.lower) / 2 / std::abs(s->estimate);
      if (half <= 0.04 || sets == 10) {
        covered += s->ci.lower <= truth && truth <= s->ci.upper ? 1 : 0;
        early += sets < 10 ? 1 : 0;
        sets_used += sets / static_cast<double>(runs);
        break;
      }
    }
  }
  const double coverage = covered / static_cast<double>(runs);
  std::cout << "[ monte carlo ] stopped at ±4 %: coverage " << coverage << ", " << early << " of "
            << runs << " runs before 10 sets, " << sets_used << " sets on average\n";
  if (test::kJudgeRates) {
    EXPECT_GT(coverage, 0.90);
    EXPECT_LT(coverage, 0.99);
    EXPECT_GT(early, runs / 2) << "the target is reachable within the budget";
  }
}

}  // namespace
}  // namespace kvbench::analysis
