#include "harness/analysis/analysis.h"

#include <cmath>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "harness/report/effects.h"

namespace kvbench::analysis {
namespace {

// Records of a shuffled run with a known effect: decode = 40 - 1.1 per 1,000 prompt tokens
// - 0.2 per minute + noise; TTFT = 100 + 900 per 1,000 tokens.
std::vector<CallRecord> simulated_run(double noise_sd, int rounds, bool with_probes) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<CallRecord> out;
  const std::vector<int> levels = {256, 1024, 2048, 4096, 7900};
  double t = 0;
  int seq = 0;
  auto add = [&](CallKind kind, int tokens) {
    CallRecord r;
    r.seq = seq++;
    r.kind = kind;
    r.prompt_tokens = tokens;
    r.num_ctx = 8192;
    r.cache_type = "f16";
    r.t_start_s = t;
    const double minutes = t / 60.0;
    r.client.decode_tps = 40 - 1.1 * tokens / 1000.0 - 0.2 * minutes + noise_sd * noise(rng);
    r.client.ttft_ms = 100 + 900 * tokens / 1000.0 + noise_sd * 10 * noise(rng);
    r.server.prompt_ms = *r.client.ttft_ms - 2;
    r.server.decode_tps = *r.client.decode_tps + 0.5;
    out.push_back(r);
    t += 20;
  };
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> order = levels;
    std::shuffle(order.begin(), order.end(), rng);
    if (with_probes) {
      add(CallKind::probe, 256);
    }
    for (int tokens : order) {
      add(CallKind::timed, tokens);
    }
  }
  return out;
}

TEST(Analysis, NoiselessRunRecoversEffectAndDrift) {
  const auto a = analyze(simulated_run(0.0, 6, false));
  ASSERT_EQ(a.timed_ok, 30U);
  const auto& decode = a.models[2];
  ASSERT_EQ(decode.metric, "decode_tps");
  ASSERT_TRUE(decode.fit) << decode.error;
  EXPECT_EQ(decode.numeric, std::vector<std::string>{"prompt_ktokens"});
  const auto& lin = decode.fit->linear;
  EXPECT_NEAR(lin.coefficient("prompt_ktokens").estimate, -1.1, 1e-9);
  EXPECT_NEAR(lin.coefficient(stats::kTimeName).estimate, -0.2, 1e-9);
  EXPECT_NEAR(lin.coefficient(stats::kInterceptName).estimate, 40.0, 1e-9);
  ASSERT_EQ(a.conditions.size(), 5U);
  EXPECT_EQ(a.conditions[0].prompt_tokens, 256);
}

TEST(Analysis, NoisyRunHasCisCoveringTheTruth) {
  const auto a = analyze(simulated_run(0.3, 6, true));
  const auto& lin = a.models[2].fit->linear;
  const auto& b1 = lin.coefficient("prompt_ktokens");
  EXPECT_LT(b1.ci.lower, -1.1);
  EXPECT_GT(b1.ci.upper, -1.1);
  EXPECT_LT(b1.ci.upper - b1.ci.lower, 0.5);
  ASSERT_TRUE(a.corr_prompt_time);
  EXPECT_LT(std::abs(*a.corr_prompt_time), 0.3);
  // Probes: six 256-token calls; their Theil-Sen slope sees the -0.2 tok/s per minute drift.
  ASSERT_EQ(a.probes.size(), 4U);
  const auto& p = a.probes[2];
  ASSERT_TRUE(p.fit);
  EXPECT_EQ(p.values.size(), 6U);
  EXPECT_LT(p.fit->slope_ci.lower, -0.2);
  EXPECT_GT(p.fit->slope_ci.upper, -0.2);
}

TEST(Analysis, UnstableWhenResidualsAreLargeAndSaysWhy) {
  const auto a = analyze(simulated_run(8.0, 6, false));
  EXPECT_TRUE(a.unstable);
  bool cv = false;
  for (const auto& v : a.models[2].validity) {
    cv = cv || v.rule == "cv_resid";
  }
  EXPECT_TRUE(cv);
}

TEST(Analysis, TooFewCallsGiveAReasonNotACrash) {
  auto calls = simulated_run(0.1, 1, false);
  calls.resize(3);
  const auto a = analyze(calls);
  EXPECT_FALSE(a.models[0].fit);
  EXPECT_NE(a.models[0].error.find("too few"), std::string::npos);
}

TEST(Analysis, EffectsMarkdownStatesEffectWithCiAndDrift) {
  std::ostringstream out;
  report::write_effects_markdown(out, analyze(simulated_run(0.0, 6, true)));
  const std::string md = out.str();
  EXPECT_NE(md.find("- **decode rate**: -1.10 [95% CI -1.10, -1.10] tok/s per 1,000 prompt tokens"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("from 40.00 tok/s at 0 tokens; drift -0.200"), std::string::npos) << md;
  EXPECT_NE(md.find("### Drift probes"), std::string::npos);
  EXPECT_NE(md.find("### Diagnostics"), std::string::npos);
}

TEST(Analysis, JsonCarriesEveryModel) {
  const nlohmann::json j = analyze(simulated_run(0.3, 6, true));
  ASSERT_EQ(j["models"].size(), 4U);
  EXPECT_TRUE(j["models"][2]["fit"].contains("linear"));
  EXPECT_EQ(j["timed_ok"], 30);
  EXPECT_EQ(j["conditions"].size(), 5U);
}

// Two server variants in ABBA blocks; "cand" decodes exactly 10 % slower and reads 20 % slower.
std::vector<CallRecord> ab_run(const std::string& first, const std::string& second) {
  std::vector<CallRecord> out;
  const std::vector<std::string> order = {first, second, second, first};
  const std::vector<int> levels = {512, 256, 1024};
  int seq = 0;
  for (std::size_t b = 0; b < order.size(); ++b) {
    for (int round = 0; round < 3; ++round) {
      for (int tokens : levels) {
        CallRecord r;
        r.seq = seq;
        r.block = static_cast<int>(b);
        r.kind = CallKind::timed;
        r.variant = order[b];
        r.prompt_tokens = tokens;
        r.num_ctx = 4096;
        r.cache_type = "f16";
        r.t_start_s = 10.0 * seq++;
        const double slow = r.variant == "cand" ? 1.0 : 0.0;
        const double drift = std::exp(-0.01 * r.t_start_s / 60.0);
        r.client.decode_tps = 40.0 * std::pow(0.9, slow) * drift * std::exp(-0.1 * tokens / 1000.0);
        r.client.ttft_ms = (50.0 + tokens) * std::pow(1.2, slow) / drift;
        out.push_back(r);
      }
    }
  }
  return out;
}

TEST(Analysis, VariantIsAFactorCodedAgainstTheFirstVariant) {
  const auto a = analyze(ab_run("base", "cand"));
  const auto& decode = a.models[2];
  ASSERT_TRUE(decode.fit) << decode.error;
  EXPECT_EQ(decode.categorical, std::vector<std::string>{"variant"});
  EXPECT_NEAR(decode.fit->log.coefficient("variant=cand").estimate, std::log(0.9), 1e-9);
  ASSERT_EQ(a.conditions.size(), 6U);
  EXPECT_EQ(a.conditions.front().variant, "base");
  const auto& ttft = a.models[0];
  ASSERT_TRUE(ttft.fit) << ttft.error;
  EXPECT_GT(ttft.fit->log.coefficient("variant=cand").estimate, 0.1);
}

TEST(Analysis, VariantReferenceCanBeNamed) {
  const auto a = analyze(ab_run("cand", "base"), 1, "base");
  const auto& decode = a.models[2];
  ASSERT_TRUE(decode.fit) << decode.error;
  EXPECT_NEAR(decode.fit->log.coefficient("variant=cand").estimate, std::log(0.9), 1e-9);
  const auto b = analyze(ab_run("cand", "base"));
  ASSERT_TRUE(b.models[2].fit);
  EXPECT_NEAR(b.models[2].fit->log.coefficient("variant=base").estimate, -std::log(0.9), 1e-9);
}

}  // namespace
}  // namespace kvbench::analysis
