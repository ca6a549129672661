#include "harness/analysis/analysis.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "harness/report/effects.h"
#include "harness/results/results.h"

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
  // The drift over the run carries the slope's CI, which the validity rule reads.
  ASSERT_TRUE(p.relative_drift && p.relative_drift_ci);
  EXPECT_LT(p.relative_drift_ci->lower, *p.relative_drift);
  EXPECT_GT(p.relative_drift_ci->upper, *p.relative_drift);
  EXPECT_LT(p.relative_drift_ci->upper, 0.0) << "six probes establish the slowing";
}

bool has_rule(const std::vector<stats::ValidityReason>& reasons, const std::string& rule) {
  return std::any_of(reasons.begin(), reasons.end(), [&](const auto& v) { return v.rule == rule; });
}

bool any_step(const Analysis& a) {
  return std::any_of(a.effects.round_levels.begin(), a.effects.round_levels.end(),
                     [](const auto& r) { return r.step.has_value(); });
}

// Spread is noise: the rules measure it, the intervals hold it, and it never makes the effects
// untrustworthy on its own.
TEST(Analysis, RepeatedCallsThatSpreadAreNoiseTheRulesMeasure) {
  const auto a = analyze(simulated_run(8.0, 6, false));
  ASSERT_TRUE(a.verdict.present);
  EXPECT_TRUE(a.verdict.honest.ok);
  EXPECT_FALSE(any_step(a));
  EXPECT_TRUE(has_rule(a.models[2].validity, "pure_error"));
  EXPECT_TRUE(has_rule(a.models[2].additive_validity, "cv_resid"));
}

// A shuffled run whose every call is slow(t) times its quiet time, with 1 % relative noise:
// prefill 40 + 300 ms per 1,000 tokens + 250 ms per (1,000 tokens)², decode 40 - 1.1 tok/s per
// 1,000 tokens.
template <typename Slow>
std::vector<CallRecord> slowing_run(int rounds, Slow slow) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<CallRecord> out;
  const std::vector<int> levels = {256, 1024, 2048, 4096, 7900};
  int seq = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> order = levels;
    std::shuffle(order.begin(), order.end(), rng);
    for (int tokens : order) {
      CallRecord r;
      r.seq = seq;
      r.round = round;
      r.kind = CallKind::timed;
      r.prompt_tokens = tokens;
      r.num_ctx = 8192;
      r.cache_type = "f16";
      r.t_start_s = 15.0 * seq++;
      const double k = tokens / 1000.0;
      const double g = slow(r.t_start_s / 60.0);
      r.client.ttft_ms = (40 + 300 * k + 250 * k * k) * g * (1 + noise(rng));
      r.server.prompt_ms = *r.client.ttft_ms * 0.98;
      r.client.decode_tps = (40 - 1.1 * k) / g * (1 + noise(rng));
      r.server.decode_tps = *r.client.decode_tps * 1.01;
      out.push_back(r);
    }
  }
  return out;
}

const HeadlineEffect& prompt_effect(const MetricModel& m) {
  for (const auto& e : m.slowdown->effects) {
    if (e.term == "prompt_ktokens") {
      return e;
    }
  }
  throw std::runtime_error("no prompt effect");
}

TEST(Analysis, CurvedPrefillIsAShapeNotNoise) {
  const auto a = analyze(slowing_run(6, [](double) { return 1.0; }));
  const auto& ttft = a.models[0];
  ASSERT_EQ(ttft.metric, "ttft_ms");
  ASSERT_TRUE(ttft.slowdown) << ttft.slowdown_error;
  EXPECT_TRUE(ttft.slowdown->quadratic);
  ASSERT_TRUE(ttft.slowdown->prefill);
  EXPECT_NEAR(ttft.slowdown->prefill->quadratic.estimate, 250, 15);
  ASSERT_TRUE(ttft.slowdown->pure_error);
  EXPECT_NEAR(*ttft.slowdown->pure_error, 0.01, 0.004);
  EXPECT_TRUE(ttft.validity.empty()) << ttft.validity.front().message;
  // The straight line of the additive model reads the curve as noise: its residual spread breaks
  // the 5 % rule.
  EXPECT_TRUE(has_rule(ttft.additive_validity, "cv_resid"));
  // Decode is straight in prompt length: no L² term.
  ASSERT_TRUE(a.models[2].slowdown);
  EXPECT_FALSE(a.models[2].slowdown->quadratic);
  EXPECT_TRUE(a.verdict.honest.ok);
  EXPECT_FALSE(any_step(a));
}

TEST(Analysis, SmoothSlowDownLeavesTheHeadlineEffectsWithinTheirCi) {
  const auto quiet = analyze(slowing_run(6, [](double) { return 1.0; }));
  const auto slowed = analyze(slowing_run(6, [](double t) { return 1.0 + 0.4 * t / 7.5; }));
  for (const std::size_t m : {0U, 2U}) {
    const auto& q = prompt_effect(quiet.models[m]);
    const auto& s = prompt_effect(slowed.models[m]);
    EXPECT_LT(s.ci.lower, q.estimate) << quiet.models[m].metric;
    EXPECT_GT(s.ci.upper, q.estimate) << quiet.models[m].metric;
    EXPECT_LT(std::abs(s.estimate / q.estimate - 1), 0.05) << quiet.models[m].metric;
  }
  // Average cost per 1,000 tokens over 256-7900 tokens: 300 + 250 · (0.256 + 7.9).
  EXPECT_NEAR(prompt_effect(quiet.models[0]).estimate, 300 + 250 * 8.156, 40);
  EXPECT_NEAR(slowed.models[0].slowdown->slow_down_end, 1.4, 0.05);
  // A ramp is no step: each block's rounds move a little at a time.
  EXPECT_FALSE(any_step(slowed));
}

TEST(Analysis, TheCpuClockIsOfferedAsACovariateBesideTime) {
  // Every call runs at a clock drawn afresh (2.2-3.0 GHz, the first at 3.0): its time is
  // proportional to 1 / clock, its decode rate to the clock. No smooth g(t) follows that.
  auto calls = slowing_run(6, [](double) { return 1.0; });
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> mhz(2200, 3000);
  for (auto& r : calls) {
    r.cpu_mhz = r.seq == 0 ? 3000.0 : mhz(rng);
    const double slower = 3000.0 / *r.cpu_mhz;
    r.client.ttft_ms = *r.client.ttft_ms * slower;
    r.server.prompt_ms = *r.server.prompt_ms * slower;
    r.client.decode_tps = *r.client.decode_tps / slower;
    r.server.decode_tps = *r.server.decode_tps / slower;
  }
  const auto a = analyze(calls);
  const auto effect_of = [](const std::vector<HeadlineEffect>& effects) {
    for (const auto& e : effects) {
      if (e.term == "prompt_ktokens") {
        return e;
      }
    }
    throw std::runtime_error("no prompt effect");
  };
  for (const std::size_t k : {0U, 2U}) {
    const auto& m = *a.models[k].slowdown;
    ASSERT_TRUE(m.clock) << m.clock_note;
    const double expected = k == 0 ? -1.0 : 1.0;  // a time falls with the clock, a rate rises
    EXPECT_NEAR(m.clock->elasticity.estimate, expected, 0.05) << m.metric;
    EXPECT_LT(m.clock->elasticity.ci.lower, expected);
    EXPECT_GT(m.clock->elasticity.ci.upper, expected);
    EXPECT_TRUE(m.clock->preferred) << m.clock->fit.bic << " against " << m.clock->bic_time_only;
    EXPECT_NEAR(m.clock->clock_min_mhz, 2200, 50);
    EXPECT_DOUBLE_EQ(m.clock->clock_max_mhz, 3000);
    // The validity rules still judge the headline, time alone: its spread is the clock's.
    EXPECT_TRUE(has_rule(a.models[k].validity, "pure_error")) << m.metric;
  }
  // With the clock taken out, the prompt effect is the quiet machine's, at the first call's clock.
  EXPECT_NEAR(effect_of(a.models[0].slowdown->clock->effects).estimate, 300 + 250 * 8.156, 40);
  EXPECT_NEAR(effect_of(a.models[2].slowdown->clock->effects).estimate, -1.1, 0.1);
  const nlohmann::json j = *a.models[0].slowdown;
  ASSERT_TRUE(j.contains("clock_covariate"));
  EXPECT_EQ(j["clock_covariate"]["preferred"], true);
  std::ostringstream md;
  report::write_effects_markdown(md, a);
  EXPECT_NE(md.str().find("the CPU clock (2"), std::string::npos) << md.str();

  // A clock that moves but does not matter: over 20 draws its elasticity's CI covers 0 and the
  // BIC keeps time alone nearly always (a 95 % CI; the BIC margin of 2 errs about 1 time in 50).
  int covered = 0;
  int preferred = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 draw(100 + seed);
    auto unrelated = slowing_run(6, [](double) { return 1.0; });
    for (auto& r : unrelated) {
      r.cpu_mhz = r.seq == 0 ? 3000.0 : mhz(draw);
    }
    const auto unrelated_analysis = analyze(unrelated);
    const auto& idle = *unrelated_analysis.models[0].slowdown;
    ASSERT_TRUE(idle.clock) << idle.clock_note;
    EXPECT_LT(std::abs(idle.clock->elasticity.estimate), 0.1) << seed;
    covered += idle.clock->elasticity.ci.lower < 0 && idle.clock->elasticity.ci.upper > 0;
    preferred += idle.clock->preferred;
  }
  EXPECT_GE(covered, 16);
  EXPECT_LE(preferred, 3);

  // A clock that stays put is said so; one call without a reading means no covariate at all.
  for (auto& r : calls) {
    r.cpu_mhz = 2600.0 + (r.seq % 2);
  }
  const auto steady = analyze(calls);
  EXPECT_FALSE(steady.models[0].slowdown->clock);
  EXPECT_NE(steady.models[0].slowdown->clock_note.find("within 1 %"), std::string::npos);
  calls[5].cpu_mhz.reset();
  const auto partial = analyze(calls);
  EXPECT_FALSE(partial.models[0].slowdown->clock);
  EXPECT_TRUE(partial.models[0].slowdown->clock_note.empty());
}

TEST(Analysis, StepSlowDownIsFlaggedAsStructure) {
  const auto a = analyze(slowing_run(6, [](double t) { return t < 3.7 ? 1.0 : 1.6; }));
  ASSERT_TRUE(any_step(a));
  const auto& ttft = a.effects.round_levels.front();
  ASSERT_EQ(ttft.metric, "ttft_ms");
  ASSERT_TRUE(ttft.step);
  EXPECT_EQ(ttft.step->round, 3U);
  EXPECT_NEAR(ttft.step->relative, 60, 3);
  EXPECT_FALSE(a.verdict.structure.ok);
  EXPECT_NE(a.verdict.structure.findings.front().find("changed once and stayed changed"),
            std::string::npos)
      << a.verdict.structure.findings.front();
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

TEST(Analysis, ANoisyRunSaysWhichMetricsTheRulesObjectToAndWhy) {
  auto calls = simulated_run(8.0, 6, false);
  for (auto& r : calls) {
    r.server.prompt_ms.reset();  // a server that does not time its prompts
  }
  const auto a = analyze(calls);
  std::ostringstream noisy;
  report::write_effects_markdown(noisy, a);
  const std::string md = noisy.str();
  EXPECT_EQ(md.find("unstable"), std::string::npos) << md;
  EXPECT_NE(md.find("What the validity rules measured"), std::string::npos) << md;
  std::vector<std::string> passed;
  for (const auto& m : a.models) {
    const std::string& label = std::find_if(metrics().begin(), metrics().end(), [&](const auto& x) {
                                 return x.key == m.metric;
                               })->label;
    if (m.metric == "server_prompt_ms") {
      EXPECT_NE(md.find("- server prompt time: no model (no call gave a value)"), std::string::npos)
          << md;
    } else if (m.validity.empty()) {
      passed.push_back(label);
    } else {
      EXPECT_NE(md.find("- " + label + ": " + m.validity.front().message), std::string::npos)
          << label << "\n"
          << md;
    }
  }
  ASSERT_TRUE(has_rule(a.models[2].validity, "pure_error"));
  if (!passed.empty()) {
    EXPECT_NE(md.find("- " + passed.front()), std::string::npos) << md;
  }
  EXPECT_EQ(md.find("server prompt time: nothing to object to"), std::string::npos) << md;
  EXPECT_NE(md.find("more than 5 % with the drift taken out are the machine's noise"),
            std::string::npos)
      << md;
  std::ostringstream quiet;
  report::write_effects_markdown(quiet, analyze(simulated_run(0.0, 6, true)));
  EXPECT_NE(quiet.str().find("The validity rules found nothing to object to."), std::string::npos)
      << quiet.str();
  EXPECT_EQ(quiet.str().find("machine's noise"), std::string::npos);
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

// A batch size that forms blocks is a restart factor like a variant: its own conditions, and an
// effect coded against the smallest batch.
TEST(Analysis, ABatchSizeFactorIsAFactorOfItsOwnConditions) {
  auto calls = ab_run("base", "cand");
  for (auto& c : calls) {
    c.batch_size = c.variant == "cand" ? 2048 : 512;  // the larger batch, 10 % slower decode
    c.variant.clear();
  }
  const auto a = analyze(calls);
  const auto& decode = a.models[2];
  ASSERT_TRUE(decode.fit) << decode.error;
  EXPECT_EQ(decode.categorical, std::vector<std::string>{"batch_size"});
  EXPECT_NEAR(decode.fit->log.coefficient("batch_size=2048").estimate, std::log(0.9), 1e-9);
  ASSERT_EQ(a.conditions.size(), 6U);
  EXPECT_EQ(a.conditions.front().batch_size, 512);
  EXPECT_EQ(a.conditions.back().batch_size, 2048);
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

// The report, the gate, precision and the commands all see one set of calls: conversation turns
// are sorted out by measured(), and a caller that passes them anyway gets the same analysis.
TEST(Measured, TurnsStayOutOfTheModelsWhoeverPassesThem) {
  const auto run = results::load_run(std::string(KVBENCH_TEST_DATA) + "/runs/conversation-tiny");
  const auto m = measured(run.calls);
  ASSERT_FALSE(m.by_design.empty());
  ASSERT_EQ(m.singles.size() + m.by_design.size(), run.calls.size());
  for (const auto& c : m.by_design) {
    EXPECT_EQ(c.part.key(), "conversation");
    EXPECT_FALSE(fresh_read(c));
    EXPECT_FALSE(single_timed(c));
  }
  const nlohmann::json all = analyze(run.calls, 7);
  const nlohmann::json singles = analyze(m.singles, 7);
  EXPECT_EQ(all, singles);
}

}  // namespace
}  // namespace kvbench::analysis
