// Carry-over: a call that runs slower after a long prompt. Simulated runs of shuffled rounds
// (three lengths, a bent log TTFT curve, a per-round level, 3 % noise) with and without a planted
// carry-over; the fit of each length's level and the previous call's length finds it, keeps its
// false alarms at the verdict's 1 %, and its interval covers the planted value. Seeded.

#include <cmath>
#include <iostream>
#include <vector>

#include <boost/random/normal_distribution.hpp>
#include <gtest/gtest.h>

#include "harness/analysis/effects.h"
#include "harness/analysis/effects_verdict.h"
#include "harness/core/random.h"
#include "tests/support/replicates.h"

namespace kvbench::analysis {
namespace {

// log TTFT per 1,000 tokens of the previous call.
std::vector<CallRecord> carry_run(double carry, Rng& rng) {
  boost::random::normal_distribution<double> noise(0.0, 0.03);
  std::vector<CallRecord> calls;
  double previous = 0;
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < 8; ++r) {
      std::vector<int> order{256, 1024, 2048};
      shuffle(order.begin(), order.end(), rng);
      const double level = 2 * noise(rng);
      for (const int len : order) {
        const double k = len / 1000.0;
        CallRecord c;
        c.seq = static_cast<int>(calls.size());
        c.block = b;
        c.round = r;
        c.kind = CallKind::timed;
        c.prompt_tokens = len;
        c.num_ctx = 4096;
        c.cache_type = "f16";
        // Prefill's intercept and L^2 term bend log TTFT.
        const double at_first = r == 0 && len == order.front() ? 0.0 : carry * previous;
        c.client.ttft_ms = (20 + 150 * k + 40 * k * k) * std::exp(level + noise(rng) + at_first);
        previous = k;
        calls.push_back(c);
      }
    }
  }
  return calls;
}

const RoundLevels::CarryOver* ttft_carry(const Effects& e) {
  for (const auto& r : e.round_levels) {
    if (r.metric == "ttft_ms" && r.carry_over) {
      return &*r.carry_over;
    }
  }
  return nullptr;
}

constexpr int kCarryRuns = test::replicates(300, 30);

TEST(CarryOver, FoundWherePlantedAndNotElsewhere) {
  Rng rng(23);
  const int runs = kCarryRuns;
  const double planted = std::log(1.05);  // 5 % slower per 1,000 tokens of the previous call
  int false_alarms = 0;
  int found = 0;
  int covered = 0;
  for (int i = 0; i < runs; ++i) {
    for (const double carry : {0.0, planted}) {
      const auto calls = carry_run(carry, rng);
      std::vector<const CallRecord*> timed;
      for (const auto& c : calls) {
        timed.push_back(&c);
      }
      const Effects e = estimate_effects(timed, "");
      const auto* c = ttft_carry(e);
      ASSERT_NE(c, nullptr);
      const EffectsVerdict v = judge_effects(e);
      bool flagged = false;
      for (const auto& f : v.structure.findings) {
        flagged = flagged || f.find("the call before it") != std::string::npos;
      }
      if (carry == 0.0) {
        false_alarms += flagged ? 1 : 0;
      } else {
        found += flagged ? 1 : 0;
        covered += c->ci.lower <= 5.0 && 5.0 <= c->ci.upper ? 1 : 0;
      }
    }
  }
  const double false_rate = static_cast<double>(false_alarms) / runs;
  const double found_rate = static_cast<double>(found) / runs;
  const double coverage = static_cast<double>(covered) / runs;
  std::cout << "[ monte carlo ] carry-over: flagged in " << false_rate << " of runs without, "
            << found_rate << " with 5 % per 1,000 tokens; coverage " << coverage << " (" << runs
            << " runs each)\n";
  if (test::kJudgeRates) {
    EXPECT_LT(false_rate, 0.03);
    EXPECT_GT(found_rate, 0.8);
    EXPECT_GT(coverage, 0.91);
    EXPECT_LT(coverage, 0.985);
  }
}

}  // namespace
}  // namespace kvbench::analysis
