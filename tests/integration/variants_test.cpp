// Server variants on the real llama-server: an A/A comparison runs in ABBA blocks with the
// variant on every record, a planted slowdown (a bigger model) shows as an effect in the right
// direction, and a run grows by one more ABBA set with unique seqs and nonces.

#include <unistd.h>

#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/analysis/analysis.h"
#include "harness/process/child.h"
#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string scenario_text(const std::string& name, const std::string& candidate_server,
                          const std::string& prompt_tokens, int repeats) {
  return R"({"name": ")" + name +
         R"(", "server": {"model": "synthetic:small", "threads": 1},
  "factors": {"prompt_tokens": )" +
         prompt_tokens + R"(}, "repeats": )" + std::to_string(repeats) +
         R"(, "warmup": 1, "max_tokens": 16, "seed": 7,
  "variants": [{"name": "baseline"}, {"name": "candidate", "server": )" +
         candidate_server + "}]}";
}

// The variant of each block, in run order, as one string of initials ("bccb").
std::string block_order(const nlohmann::json& blocks) {
  std::string out;
  for (const auto& b : blocks) {
    out += b.value("variant", "?").substr(0, 1);
  }
  return out;
}

// A C string: a std::string made for the call looks, to GCC 14, like a temporary the returned
// reference might dangle from.
const stats::RelativeEffect& variant_effect(const analysis::Analysis& a, const char* key) {
  for (const auto& m : a.models) {
    if (m.metric == key && m.fit) {
      for (const auto& e : m.fit->relative_effects) {
        if (e.name == "variant=candidate") {
          return e;
        }
      }
    }
  }
  throw std::runtime_error(std::string("no variant effect for ") + key);
}

TEST(Variants, AaRunsInAbbaBlocksWithTheVariantOnEveryRecord) {
  const fs::path results = fresh_dir("variants-aa");
  const auto scenario = write_file(results, "aa.json", scenario_text("aa", "{}", "[64, 256]", 2));
  const auto r = run_kvbench({"run", scenario, "--results", results.string(), "-q", "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| baseline | 4096 | f16 | 64 |"));
  EXPECT_THAT(r.out, HasSubstr("- candidate vs baseline: decode rate "));
  const fs::path run_dir = only_run_dir(results);
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["status"], "complete");
  EXPECT_EQ(block_order(run["plan"]["blocks"]), "bccb");
  EXPECT_EQ(block_order(run["blocks"]), "bccb");
  ASSERT_EQ(run["variants"].size(), 2U);
  EXPECT_EQ(run["variants"][1]["name"], "candidate");
  EXPECT_EQ(run["variants"][1]["server"]["threads"], 1);
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 4U * (1 + 2 * 2));
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_EQ(c.variant,
              run["blocks"][static_cast<std::size_t>(c.block)]["variant"].get<std::string>())
        << c.seq;
  }
  const auto a = analysis::analyze(calls, 7, "baseline");
  for (const auto& m : a.models) {
    EXPECT_EQ(m.categorical, std::vector<std::string>{"variant"}) << m.metric;
  }
  EXPECT_NO_THROW(variant_effect(a, "decode_tps"));
}

TEST(Variants, APlantedSlowdownIsAFittedEffectInTheRightDirection) {
  // The candidate serves a model with twice the layers and width: a real, large slowdown that
  // does not depend on how many cores the machine has.
  const fs::path results = fresh_dir("variants-slow");
  const auto scenario =
      write_file(results, "slow.json",
                 scenario_text("slow", R"({"model": "synthetic:lesson"})", "[64, 128, 256]", 2));
  const auto r = run_kvbench({"run", scenario, "--results", results.string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = read_calls(only_run_dir(results));
  const auto a = analysis::analyze(calls, 7, "baseline");
  const auto& decode = variant_effect(a, "decode_tps");
  EXPECT_LT(decode.relative, 0);
  EXPECT_LT(decode.ci.upper, 0) << "decode rate " << decode.relative;
  const auto& ttft = variant_effect(a, "ttft_ms");
  EXPECT_GT(ttft.relative, 0);
  EXPECT_GT(ttft.ci.lower, 0) << "TTFT " << ttft.relative;
}

TEST(Variants, ExtendAddsOneAbbaSetWithUniqueSeqsAndNonces) {
  const fs::path results = fresh_dir("variants-extend");
  const auto scenario = write_file(results, "ext.json", scenario_text("ext", "{}", "[64]", 1));
  ASSERT_EQ(run_kvbench({"run", scenario, "--results", results.string(), "-q"}).exit_code, 0);
  const fs::path run_dir = only_run_dir(results);
  const auto before = read_json(run_dir / "run.json");
  const auto r = run_kvbench({"run", "--extend", run_dir.string(), "--sets", "1", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto after = read_json(run_dir / "run.json");
  EXPECT_EQ(after["status"], "complete");
  EXPECT_EQ(after["run_id"], before["run_id"]);
  EXPECT_EQ(after["scenario"]["block_repeats"], 2);
  ASSERT_EQ(after["extended"].size(), 1U);
  EXPECT_EQ(after["extended"][0]["sets"], 1);
  EXPECT_EQ(block_order(after["plan"]["blocks"]), "bccbbccb");
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(after["plan"]["blocks"][i], before["plan"]["blocks"][i]) << "block " << i;
  }
  EXPECT_EQ(block_order(after["blocks"]), "bccbbccb");
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 8U * 2);
  std::set<int> seqs;
  std::set<std::string> nonces;
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_EQ(c.run_id, before["run_id"].get<std::string>());
    seqs.insert(c.seq);
    nonces.insert(c.nonce);
  }
  EXPECT_EQ(seqs.size(), calls.size());
  EXPECT_EQ(*seqs.rbegin(), 15);
  EXPECT_EQ(nonces.size(), calls.size());
}

TEST(Variants, AttachedVariantsAtTheirOwnUrls) {
  const fs::path dir = fresh_dir("variants-attached");
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const int port_a = 20000 + static_cast<int>(::getpid() % 2000);
  const int port_b = port_a + 2000;
  auto a = serve_by_hand(dir / "tiny.gguf", port_a, dir / "a.log", 1);
  auto b = serve_by_hand(dir / "tiny.gguf", port_b, dir / "b.log", 1);
  const auto url = [](int port) { return "http://127.0.0.1:" + std::to_string(port); };
  const std::string scenario =
      write_file(dir, "s.json",
                 R"({"name": "att", "server": {"url": ")" + url(port_a) +
                     R"("}, "factors": {"prompt_tokens": [64], "num_ctx": 1024}, "repeats": 1,
          "max_tokens": 4, "variants": [{"name": "a"}, {"name": "b", "server": {"url": ")" +
                     url(port_b) + R"("}}]})");
  const KvbenchResult r = run_when_ready(scenario, dir / "runs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = read_json(only_run_dir(dir / "runs") / "run.json");
  ASSERT_EQ(run["blocks"].size(), 4U);
  for (const auto& block : run["blocks"]) {
    EXPECT_EQ(block["url"], url(block["variant"] == "a" ? port_a : port_b)) << block["index"];
  }
  EXPECT_EQ(run["variants"][1]["found"]["server"]["url"], url(port_b));
  for (const auto& c : read_calls(only_run_dir(dir / "runs"))) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
  }
}

TEST(Variants, ExtendRefusesARunWithoutVariants) {
  const fs::path dir = fresh_dir("variants-extend-plain");
  write_file(dir, "run.json",
             R"({"run_id": "x", "scenario": {"name": "x", "factors": {"prompt_tokens": [64]}},
                 "plan": {"seed": 42, "blocks": []}})");
  write_file(dir, "calls.jsonl", "");
  const auto r = run_kvbench({"run", "--extend", dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the run compares no server variants"));
}

}  // namespace
}  // namespace kvbench::itest
