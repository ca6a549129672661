// The OpenAI- and Anthropic-compatible kinds on the real llama-server: its /v1/chat/completions,
// /v1/completions and /v1/messages, managed by kvbench or started by hand and attached. Every
// timed call carries a cache proof (the reported cached tokens equal the prediction, the chat
// template's start included), and a repeated prompt is flagged.

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/process/ports.h"
#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

bool flagged(const CallRecord& r, const std::string& f) {
  return std::find(r.flags.begin(), r.flags.end(), f) != r.flags.end();
}

struct KindCase {
  std::string name;
  std::string server;  // the scenario's "server" members besides the model
};

class CompatKinds : public ::testing::TestWithParam<KindCase> {};

TEST_P(CompatKinds, ManagedServerGivesEveryTimedCallItsCacheProof) {
  const auto& k = GetParam();
  const fs::path dir = fresh_dir("compat-" + k.name);
  const std::string scenario = write_file(dir, "s.json", R"({"name": "compat",
    "server": {)" + k.server + R"(, "model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [128, 512], "num_ctx": 1024}, "repeats": 2, "max_tokens": 8})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["server"]["mode"], "managed");
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 5U);  // 1 warm-up, 4 timed
  std::set<int> reused;
  for (const auto& c : calls) {
    ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_EQ(c.prompt_tokens_counted, c.prompt_tokens) << "sized with the template counted";
    ASSERT_TRUE(c.server.cache_n && c.expected_cache_n) << c.seq;
    // The proof: what the server reused is what the slot's previous prompt predicts; for a
    // fresh prompt that is the template's start (and BOS), the same for every call, never any
    // of the unique first line (no prompt_cache_hit flag).
    EXPECT_EQ(*c.server.cache_n, *c.expected_cache_n) << c.seq;
    reused.insert(*c.server.cache_n);
    EXPECT_TRUE(c.flags.empty()) << c.seq;
    EXPECT_EQ(c.client.tokens, 8) << c.seq;
    EXPECT_TRUE(c.client.ttft_ms && c.client.first_event_ms) << c.seq;
    EXPECT_LE(*c.client.first_event_ms, *c.client.ttft_ms) << c.seq;
  }
  ASSERT_EQ(reused.size(), 1U);
  EXPECT_LT(*reused.begin(), 32) << "more than a template's start was reused";
  // The report reads these runs as any other, and sets llama-server's own counter of processed
  // prompt tokens (/metrics, scraped at the block's start and end) beside the calls' prompt_n.
  EXPECT_TRUE(run["blocks"][0]["server_counters"]["at_start"]["samples"].contains(
      "llamacpp:prompt_tokens_total"));
  const auto rep = run_kvbench({"report", run_dir.string()});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_THAT(rep.out, HasSubstr("| 1024 | f16 | 512 |"));
  EXPECT_THAT(rep.out, HasSubstr("`llamacpp:prompt_tokens_total`"));
  EXPECT_THAT(rep.out, HasSubstr("they agree in every block"));
}

INSTANTIATE_TEST_SUITE_P(
    OnLlamaServer, CompatKinds,
    ::testing::Values(KindCase{"chat", R"("kind": "openai")"},
                      KindCase{"completions", R"("kind": "openai", "endpoint": "completions")"},
                      KindCase{"messages", R"("kind": "anthropic")"}),
    [](const auto& p) { return p.param.name; });

TEST(CompatKinds, RepeatedPromptIsFlaggedThroughTheChatEndpoint) {
  const fs::path dir = fresh_dir("compat-trap");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "trap",
    "server": {"kind": "openai", "model": "synthetic:tiny"}, "unique_first_line": false,
    "factors": {"prompt_tokens": [256], "num_ctx": 1024}, "repeats": 3, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = read_calls(only_run_dir(dir / "runs"));
  int hits = 0;
  for (const auto& c : calls) {
    if (c.kind == kvbench::CallKind::timed) {
      ASSERT_TRUE(c.server.cache_n);
      hits += flagged(c, "prompt_cache_hit") ? 1 : 0;
      EXPECT_GT(*c.server.cache_n, 200) << "the resent prompt was read from the cache";
    }
  }
  EXPECT_EQ(hits, 3);
}

// Edits by token through the chat template: each edited read reuses exactly the tokens before its
// first difference, as the server reports them.
TEST(CompatKinds, EditedResendsReuseUpToTheirFirstDifference) {
  const fs::path dir = fresh_dir("compat-edit");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "edit",
    "server": {"kind": "openai", "model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [512], "num_ctx": 1024,
                "edit_position": [0.25, 0.75, "question", "none"]},
    "repeats": 1, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, int> reused;
  for (const auto& c : read_calls(only_run_dir(dir / "runs"))) {
    ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    EXPECT_TRUE(c.flags.empty()) << c.seq;
    if (c.pair_role == kvbench::PairRole::edited) {
      ASSERT_TRUE(c.server.cache_n && c.expected_cache_n && c.edit_first_diff);
      EXPECT_EQ(*c.server.cache_n, *c.expected_cache_n) << c.edit_position;
      // The whole prompt resent: all but the one token a server always reads again.
      EXPECT_EQ(*c.expected_cache_n,
                c.edit_position == "none" ? *c.edit_first_diff - 1 : *c.edit_first_diff);
      reused[c.edit_position] = *c.server.cache_n;
    }
  }
  ASSERT_EQ(reused.size(), 4U);
  EXPECT_LT(reused["0.25"], reused["0.75"]);
  EXPECT_LT(reused["0.75"], reused["question"]);
  EXPECT_LT(reused["question"], reused["none"]);
}

// Concurrent streams through /v1/chat/completions: each pinned to its own slot, so each call's
// reuse is still predicted and proven.
TEST(CompatKinds, ConcurrentStreamsKeepTheirCacheProof) {
  const fs::path dir = fresh_dir("compat-concurrency");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "conc",
    "server": {"kind": "openai", "model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [128], "num_ctx": 512},
    "concurrency": {"streams": [4]}, "repeats": 8, "warmup": 0, "max_tokens": 8})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = read_calls(only_run_dir(dir / "runs"));
  ASSERT_EQ(calls.size(), 8U);
  std::set<int> streams;
  for (const auto& c : calls) {
    ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    ASSERT_TRUE(c.stream && c.server.cache_n && c.expected_cache_n);
    streams.insert(*c.stream);
    EXPECT_EQ(*c.server.cache_n, *c.expected_cache_n) << c.seq;
    EXPECT_TRUE(c.flags.empty()) << c.seq;
  }
  EXPECT_EQ(streams.size(), 4U);
}

TEST(CompatKinds, AttachedOpenAiServerIsRecognisedAsLlamaServer) {
  const fs::path dir = fresh_dir("compat-attached");
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const int port = 16000 + static_cast<int>(::getpid() % 2000);
  auto server = serve_by_hand(dir / "tiny.gguf", port, dir / "server.log");
  const std::string scenario = write_file(dir, "s.json",
                                          R"({"name": "att",
    "server": {"kind": "openai", "model": "tiny", "url": "http://127.0.0.1:)" +
                                              std::to_string(port) + R"(/v1"},
    "factors": {"prompt_tokens": [100, 300], "num_ctx": 1024}, "repeats": 2, "max_tokens": 4})");
  const KvbenchResult r = run_when_ready(scenario, dir / "runs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["server"]["mode"], "attached");
  EXPECT_EQ(run["server"]["kind"], "openai");
  EXPECT_EQ(run["server"]["llama_server"], true);
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 5U);
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    if (c.kind == kvbench::CallKind::timed) {
      ASSERT_TRUE(c.server.cache_n && c.expected_cache_n);
      EXPECT_EQ(*c.server.cache_n, *c.expected_cache_n) << c.seq;
      EXPECT_TRUE(c.flags.empty()) << c.seq;
    }
  }
  EXPECT_TRUE(server.running());
  server.stop(std::chrono::milliseconds(3000));
}

std::string slurp_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every file under `dir` but the scenario, and the outputs: none holds `secret`.
void expect_secret_nowhere(const fs::path& dir, const std::string& secret, const KvbenchResult& r) {
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  EXPECT_EQ(r.err.find(secret), std::string::npos);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename() != "s.json") {
      EXPECT_EQ(slurp_file(e.path()).find(secret), std::string::npos) << e.path();
    }
  }
}

// A hosted OpenAI-style API: no tokenizer (prompts sized by calibration), the role chunk first
// and reasoning deltas before the answer (neither is the TTFT), cached tokens reported and, for a
// fresh first line, none; a 429 is a refused call, recorded and not retried.
TEST(HostedShapes, OpenAiStyleApiWithoutTokenizerIsMeasuredAndRefusalsRecorded) {
  const fs::path dir = fresh_dir("hosted-openai");
  const std::string secret = "sk-fixture-" + std::to_string(::getpid()) + "-b71e";
  HostedFixture api({{"HOSTED_FIXTURE_KEY", secret},
                     {"HOSTED_FIXTURE_REASONING", "3"},
                     {"HOSTED_FIXTURE_429_ON", "8"}},
                    dir / "fixture.log");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "hosted",
    "server": {"kind": "openai", "url": ")" + api.url() + R"(", "model": "fixture-model",
               "api_key_env": "KVBENCH_TEST_HOSTED_KEY",
               "cache_rule": {"min_tokens": 1024, "step": 128}},
    "factors": {"prompt_tokens": [1100, 2048], "num_ctx": 8192}, "repeats": 2, "max_tokens": 8})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"}, 600,
                             {{"KVBENCH_TEST_HOSTED_KEY", secret}});
  // One of four timed calls refused: recorded, and more than the 10 % a run may lose.
  ASSERT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("kvbench run: 1 of 4 timed calls failed (25 %"));
  const auto run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["server"]["llama_server"], false);
  EXPECT_THAT(run["server"]["tokens"].get<std::string>(), HasSubstr("calibration"));
  EXPECT_TRUE(run["blocks"][0].contains("calibration"));
  int refused = 0;
  int ok = 0;
  for (const auto& c : read_calls(run_dir)) {
    if (c.outcome == kvbench::Outcome::http_error) {
      EXPECT_EQ(c.http_status, 429);
      EXPECT_THAT(c.error, HasSubstr("refused: HTTP 429"));
      EXPECT_THAT(c.error, HasSubstr("Retry-After: 2"));
      EXPECT_THAT(c.error, HasSubstr("not retried"));
      ++refused;
      continue;
    }
    ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    ++ok;
    // Sized from the calibration, within a few tokens.
    ASSERT_TRUE(c.server.prompt_n);
    EXPECT_NEAR(*c.server.prompt_n, c.prompt_tokens, 8) << c.seq;
    // No token ids, but below the provider's minimum nothing before a fresh first line is cached.
    ASSERT_TRUE(c.expected_cache_n);
    EXPECT_EQ(*c.expected_cache_n, 0);
    ASSERT_TRUE(c.server.cache_n) << "cached_tokens is reported";
    EXPECT_EQ(*c.server.cache_n, 0) << "a fresh first line shares nothing cacheable";
    ASSERT_TRUE(c.client.first_event_ms && c.client.first_reasoning_ms && c.client.ttft_ms);
    EXPECT_LT(*c.client.first_event_ms, *c.client.first_reasoning_ms) << "the role chunk";
    EXPECT_LT(*c.client.first_reasoning_ms, *c.client.ttft_ms) << "reasoning is not the TTFT";
    EXPECT_EQ(c.client.reasoning_tokens, 3);
    EXPECT_EQ(c.client.tokens, 8);
  }
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(ok, 4);
  const auto rep = run_kvbench({"report", run_dir.string()});
  EXPECT_THAT(rep.out, HasSubstr("Prompt cache: 3 of 3 timed calls reused exactly"));
  EXPECT_THAT(rep.out, HasSubstr("nothing below 1024 tokens, then whole steps of 128 tokens"));
  expect_secret_nowhere(dir, secret, r);
}

// A key the server refuses is bad input: exit 2 before any call, nothing created, the key nowhere.
TEST(HostedShapes, RefusedKeyStopsTheRunBeforeAnyCall) {
  const fs::path dir = fresh_dir("hosted-refused");
  const std::string secret = "sk-fixture-right-" + std::to_string(::getpid());
  const std::string wrong = "sk-fixture-wrong-" + std::to_string(::getpid());
  HostedFixture api({{"HOSTED_FIXTURE_KEY", secret}}, dir / "fixture.log");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "refused",
    "server": {"kind": "openai", "url": ")" + api.url() + R"(", "model": "fixture-model",
               "api_key_env": "KVBENCH_TEST_HOSTED_KEY"},
    "factors": {"prompt_tokens": [300]}, "repeats": 1, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"}, 120,
                             {{"KVBENCH_TEST_HOSTED_KEY", wrong}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("refused the API key (HTTP 401): check server.api_key_env"));
  EXPECT_FALSE(fs::exists(dir / "runs"));
  EXPECT_EQ(r.err.find(wrong), std::string::npos);
  EXPECT_EQ(r.out.find(wrong), std::string::npos);
}

// vLLM's shape: a /tokenize at the root and a prefix cache in blocks of 16 (vLLM's default block
// size). The ids are known, so every edited resend's reuse is predicted in whole blocks and
// matches what the server reports, and the saving follows the edit's position.
TEST(HostedShapes, VllmStyleTokenizerPredictsEveryEditedResend) {
  const fs::path dir = fresh_dir("hosted-vllm");
  HostedFixture api({{"HOSTED_FIXTURE_TOKENIZE", "1"},
                     {"HOSTED_FIXTURE_CACHE_MIN", "0"},
                     {"HOSTED_FIXTURE_CACHE_STEP", "16"},
                     {"HOSTED_FIXTURE_VLLM_METRICS", "1"}},
                    dir / "fixture.log");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "vllm-edit",
    "server": {"kind": "openai", "url": ")" + api.url() + R"(", "model": "fixture-model",
               "cache_rule": {"step": 16}},
    "factors": {"prompt_tokens": [1024], "num_ctx": 8192,
                "edit_position": [0.25, 0.75, "none"]},
    "repeats": 1, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["server"]["tokens"], "POST /tokenize (vLLM style)");
  EXPECT_FALSE(run["blocks"][0].contains("calibration")) << "ids are counted, not estimated";
  std::map<std::string, int> reused;
  for (const auto& c : read_calls(run_dir)) {
    ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    EXPECT_TRUE(c.flags.empty()) << c.seq;
    ASSERT_TRUE(c.server.cache_n && c.expected_cache_n) << c.seq;
    EXPECT_EQ(*c.server.cache_n, *c.expected_cache_n) << c.seq;
    EXPECT_EQ(*c.expected_cache_n % 16, 0);
    ASSERT_TRUE(c.prompt_tokens_counted);
    EXPECT_EQ(*c.prompt_tokens_counted, c.prompt_tokens) << "sized with the server's tokenizer";
    if (c.pair_role == kvbench::PairRole::edited) {
      reused[c.edit_position] = *c.server.cache_n;
    }
  }
  ASSERT_EQ(reused.size(), 3U);
  EXPECT_NEAR(reused["0.25"], 256, 24);
  EXPECT_NEAR(reused["0.75"], 768, 24);
  EXPECT_GE(reused["none"], 1008);
  const auto rep = run_kvbench({"report", run_dir.string()});
  EXPECT_THAT(rep.out, HasSubstr("Prompt cache: 6 of 6 timed calls reused exactly"));
  EXPECT_THAT(rep.out, HasSubstr("caching rule (server.cache_rule): whole steps of 16 tokens."));
  EXPECT_THAT(rep.out, ::testing::Not(HasSubstr("they differ")));
}

// The same prompt resent to the hosted OpenAI shape: cached in 128-token steps, flagged.
TEST(HostedShapes, RepeatedPromptOnAHostedCacheIsFlagged) {
  const fs::path dir = fresh_dir("hosted-trap");
  HostedFixture api({{"HOSTED_FIXTURE_VLLM_METRICS", "1"}}, dir / "fixture.log");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "trap",
    "server": {"kind": "openai", "url": ")" + api.url() + R"(", "model": "fixture-model"},
    "unique_first_line": false,
    "factors": {"prompt_tokens": [2048], "num_ctx": 8192}, "repeats": 3, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rep = run_kvbench({"report", only_run_dir(dir / "runs").string()});
  EXPECT_THAT(rep.out, HasSubstr("the server reported its reused tokens on 3 timed calls"));
  EXPECT_THAT(rep.out, HasSubstr("3 read past their unique first line"));
  EXPECT_THAT(rep.out, HasSubstr("no call's reuse was predicted"));
  // vLLM-style prefix-cache counters, scraped at the block's start and end, agree with the calls.
  EXPECT_THAT(rep.out, HasSubstr("`vllm:prefix_cache_hits_total`"));
  EXPECT_THAT(rep.out, HasSubstr("`vllm:prefix_cache_queries_total`"));
  EXPECT_THAT(rep.out, ::testing::Not(HasSubstr("they differ")));
  for (const auto& c : read_calls(only_run_dir(dir / "runs"))) {
    if (c.kind == kvbench::CallKind::timed) {
      ASSERT_TRUE(c.server.cache_n);
      EXPECT_GE(*c.server.cache_n, 1024);
      EXPECT_EQ(*c.server.cache_n % 128, 0);
      EXPECT_TRUE(flagged(c, "prompt_cache_hit")) << c.seq;
    }
  }
}

// The hosted Anthropic shape: prompts counted by /v1/messages/count_tokens, usage from
// message_start and message_delta, an overloaded_error mid-stream recorded as a server error.
TEST(HostedShapes, AnthropicStyleApiCountsTokensAndRecordsOverload) {
  const fs::path dir = fresh_dir("hosted-anthropic");
  const std::string secret = "sk-ant-fixture-" + std::to_string(::getpid());
  HostedFixture api({{"HOSTED_FIXTURE_KEY", secret}, {"HOSTED_FIXTURE_OVERLOADED_ON", "3"}},
                    dir / "fixture.log");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "ant",
    "server": {"kind": "anthropic", "url": ")" + api.url() + R"(", "model": "fixture-model",
               "api_key_env": "KVBENCH_TEST_HOSTED_KEY"},
    "factors": {"prompt_tokens": [300, 900], "num_ctx": 8192}, "repeats": 2, "max_tokens": 8})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"}, 600,
                             {{"KVBENCH_TEST_HOSTED_KEY", secret}});
  // The overloaded call is one of four timed ones: more than a run may lose.
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("1 of 4 timed calls failed"));
  int overloaded = 0;
  for (const auto& c : read_calls(only_run_dir(dir / "runs"))) {
    if (c.outcome == kvbench::Outcome::server_error) {
      EXPECT_EQ(c.error, "overloaded_error: Overloaded");
      ++overloaded;
      continue;
    }
    ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_EQ(c.prompt_tokens_counted, std::nullopt) << "counted, but no token ids";
    ASSERT_TRUE(c.server.prompt_n && c.server.cache_n);
    EXPECT_NEAR(*c.server.prompt_n, c.prompt_tokens, 4) << c.seq;
    EXPECT_EQ(*c.server.cache_n, 0);
    EXPECT_EQ(c.client.tokens, 8);
  }
  EXPECT_EQ(overloaded, 1);
  expect_secret_nowhere(dir, secret, r);
}

// Anthropic caches only up to a cache_control breakpoint: with one at the end of the prompt, a
// fresh first line writes the cache and reads nothing; the same prompt resent reads it all back.
TEST(HostedShapes, AnthropicBreakpointWritesThenReadsTheCache) {
  const fs::path dir = fresh_dir("hosted-breakpoint");
  HostedFixture api({}, dir / "fixture.log");
  for (const bool unique : {true, false}) {
    const fs::path runs = dir / (unique ? "unique" : "repeated");
    const std::string scenario = write_file(dir, unique ? "u.json" : "r.json", R"({"name": "bp",
      "server": {"kind": "anthropic", "url": ")" + api.url() + R"(", "model": "fixture-model",
                 "cache_breakpoint": "end"},
      "unique_first_line": )" + (unique ? "true" : "false") + R"(,
      "factors": {"prompt_tokens": [1100], "num_ctx": 8192}, "repeats": 3, "max_tokens": 4})");
    const auto r = run_kvbench({"run", scenario, "--results", runs.string(), "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& c : read_calls(only_run_dir(runs))) {
      ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
      ASSERT_TRUE(c.server.cache_n);
      const int written = c.server.raw["start_usage"].value("cache_creation_input_tokens", -1);
      if (unique || c.kind == kvbench::CallKind::warmup) {
        EXPECT_EQ(*c.server.cache_n, 0) << c.seq;
        EXPECT_GE(written, 1024) << c.seq << ": the breakpoint's prefix was written";
      } else {
        EXPECT_GE(*c.server.cache_n, 1024) << c.seq;
        EXPECT_EQ(written, 0) << c.seq;
        EXPECT_TRUE(flagged(c, "prompt_cache_hit")) << c.seq;
      }
    }
  }
}

}  // namespace
}  // namespace kvbench::itest
