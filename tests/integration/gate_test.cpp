// `kvbench gate` on the real llama-server: identical variants raise no false alarm, a planted
// regression (the candidate serves a model twice as deep and wide) fails with the effect in the
// right direction, and the same change the other way round passes as an improvement. Each writes
// its verdict to stdout, gate.json, gate.md and JUnit XML, and exits 0 (pass), 1 (fail) or 3
// (inconclusive).
//
// Sizes and limits come from measurements on a quiet 2-core VM (synthetic:lesson, one server
// thread, 256 prompt tokens, 64 decoded): TTFT varies about 2 % from call to call, but the decode
// rate about 10 % from call to call and 5-8 % between server starts, also by the server's own
// timings, and one A/A run on a quiet machine gave decode -9.5 % [-16.0, -2.5] between identical
// variants after 6 sets. Later the same VM got noisier: llama-server's own decode rate over 16
// calls in a row, with no kvbench involved (curl to /completion, 64 tokens), ran 112-192 tok/s,
// and two A/A runs of this test read a residual CV of 23 % (decode) and 17 % (TTFT) on the log
// model, which the gate then called unstable. So these scenarios state their limits: residual
// CV up to 30 % (still read; noise now widens the bounds instead of vetoing a pass), decode
// margin 25 %, TTFT margin 10 % (the default), and up to 6 counterbalanced sets. The planted
// change moves decode by about -90 % and TTFT by about +360 %.

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string gate_scenario(const std::string& name, const std::string& baseline_model,
                          const std::string& candidate_model, int max_sets = 6,
                          const std::string& kind = "llama-server") {
  return R"({"name": ")" + name + R"(",
  "server": {"kind": ")" +
         kind + R"(", "model": ")" + baseline_model + R"(", "threads": 1},
  "factors": {"prompt_tokens": [256], "num_ctx": [2048]},
  "repeats": 5, "warmup": 1, "max_tokens": 64, "seed": 5,
  "variants": [{"name": "baseline"},
               {"name": "candidate", "server": {"model": ")" +
         candidate_model + R"("}}],
  "gate": {"max_cv": 0.30, "max_sets": )" +
         std::to_string(max_sets) + R"(,
           "metrics": [{"metric": "decode_tps", "margin": 0.25},
                       {"metric": "ttft_ms", "margin": 0.10}]}})";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct GateOutcome {
  KvbenchResult result;
  nlohmann::json gate;  // gate.json
  std::string junit;
  std::string markdown;
  std::string step_summary;  // what was appended to $GITHUB_STEP_SUMMARY
};

GateOutcome run_gate(const std::string& name, const std::string& base, const std::string& cand,
                     int max_sets = 6, const std::string& kind = "llama-server") {
  const fs::path results = fresh_dir("gate-" + name);
  const auto scenario =
      write_file(results, name + ".json", gate_scenario(name, base, cand, max_sets, kind));
  const fs::path summary = results / "step-summary.md";
  GateOutcome g;
  g.result = run_kvbench({"gate", scenario, "--results", results.string(), "-q"}, 900,
                         {{"GITHUB_STEP_SUMMARY", summary.string()}});
  const fs::path run_dir = only_run_dir(results);
  g.gate = read_json(run_dir / "gate.json");
  g.junit = slurp(run_dir / "gate.junit.xml");
  g.markdown = slurp(run_dir / "gate.md");
  g.step_summary = slurp(summary);
  return g;
}

// A C string: a std::string made for the call looks, to GCC 14, like a temporary the returned
// reference might dangle from.
const nlohmann::json& entry(const nlohmann::json& gate, const char* metric) {
  for (const auto& e : gate.at("details").at("gate").at("entries")) {
    if (e.at("metric") == metric) {
      return e;
    }
  }
  throw std::runtime_error(std::string("no gate entry for ") + metric);
}

// Identical variants must never FAIL. On this VM they cannot always PASS either: between server
// starts the decode rate swings so much (llama-server alone: 112-192 tok/s over 16 calls) that
// after 6 sets one A/A run read decode -15.1 % [-30.1, +3.1]; its slowdown bound reached past the
// 25 % margin, so the gate said INCONCLUSIVE, which is its honest answer. The gate's false-alarm
// and pass rates are checked by simulation (tests/gate/monte_carlo_test.cpp). The smaller model
// and at most 3 sets keep it short (with the lesson model and 6 sets it took 109 s here).
TEST(GateOnServer, IdenticalVariantsRaiseNoFalseAlarm) {
  const auto g = run_gate("aa", "synthetic:small", "synthetic:small", 3);
  EXPECT_NE(g.result.exit_code, 1) << g.result.out << g.result.err;
  for (const char* metric : {"decode_tps", "ttft_ms"}) {
    EXPECT_NE(entry(g.gate, metric).at("verdict"), "FAIL") << metric << ": " << g.gate.dump(1);
  }
  EXPECT_THAT(g.result.out, Not(HasSubstr("FAIL decode_tps")));
  EXPECT_THAT(g.result.out, Not(HasSubstr("FAIL ttft_ms")));
  EXPECT_THAT(g.junit, HasSubstr("tests=\"2\""));
  EXPECT_EQ(g.step_summary, g.markdown);
  if (g.gate.at("overall") == "PASS") {
    EXPECT_EQ(g.result.exit_code, 0);
    EXPECT_THAT(g.result.out, HasSubstr("PASS decode_tps candidate vs baseline"));
    EXPECT_THAT(g.result.out, HasSubstr("PASS ttft_ms candidate vs baseline"));
    EXPECT_THAT(g.junit, Not(HasSubstr("<failure")));
  } else {
    EXPECT_EQ(g.gate.at("overall"), "INCONCLUSIVE") << g.gate.dump(1);
    EXPECT_EQ(g.result.exit_code, 3);
  }
}

TEST(GateOnServer, PlantedRegressionFailsInTheRightDirection) {
  const auto g = run_gate("slower", "synthetic:small", "synthetic:lesson");
  EXPECT_EQ(g.result.exit_code, 1) << g.result.out << g.result.err;
  EXPECT_EQ(g.gate.at("overall"), "FAIL");
  const auto& decode = entry(g.gate, "decode_tps");
  const auto& ttft = entry(g.gate, "ttft_ms");
  EXPECT_EQ(decode.at("verdict"), "FAIL");
  EXPECT_EQ(ttft.at("verdict"), "FAIL");
  EXPECT_LT(decode.at("change").get<double>(), -0.05);  // decoding got slower
  EXPECT_GT(ttft.at("change").get<double>(), 0.10);     // the first token came later
  EXPECT_GT(decode.at("result").at("slowdown_lower").get<double>(), 0.05);
  EXPECT_THAT(g.junit, HasSubstr("<failure"));
  EXPECT_THAT(g.result.out, HasSubstr("FAIL decode_tps candidate vs baseline"));
}

// The same gate through llama-server's OpenAI-compatible API: comparing two servers or two models
// behind /v1/chat/completions. The gate stops at the first set with a FAIL, so after one set (4
// starts, df 2) TTFT's +360 % may decide it while decode's interval still reaches inside its 25 %
// margin (on this VM once: decode -78.6 % [-94.9, -11.0], INCONCLUSIVE): decode must show the
// slowdown and never pass, and one of the two must fail.
TEST(GateOnServer, PlantedRegressionFailsThroughTheOpenAiApi) {
  const auto g = run_gate("slower-openai", "synthetic:small", "synthetic:lesson", 6, "openai");
  EXPECT_EQ(g.result.exit_code, 1) << g.result.out << g.result.err;
  EXPECT_EQ(g.gate.at("overall"), "FAIL");
  const auto& decode = entry(g.gate, "decode_tps");
  EXPECT_NE(decode.at("verdict"), "PASS");
  EXPECT_LT(decode.at("change").get<double>(), -0.05);
  EXPECT_TRUE(decode.at("verdict") == "FAIL" || entry(g.gate, "ttft_ms").at("verdict") == "FAIL");
  EXPECT_THAT(g.result.out, HasSubstr("candidate vs baseline"));
}

TEST(GateOnServer, PlantedImprovementPasses) {
  const auto g = run_gate("faster", "synthetic:lesson", "synthetic:small");
  EXPECT_EQ(g.result.exit_code, 0) << g.result.out << g.result.err;
  EXPECT_EQ(g.gate.at("overall"), "PASS") << g.gate.dump(1);
  const auto& decode = entry(g.gate, "decode_tps");
  EXPECT_GT(decode.at("change").get<double>(), 0.05);  // decoding got faster
  EXPECT_LT(decode.at("result").at("slowdown_upper").get<double>(), 0.0);
  EXPECT_LT(entry(g.gate, "ttft_ms").at("change").get<double>(), -0.10);
}

}  // namespace
}  // namespace kvbench::itest
