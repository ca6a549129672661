// kvbench on Ollama, against the fixture server that follows Ollama's API (tests/fixtures): the
// quickstart with only the server kind and model changed, a num_ctx sweep read from /api/ps, a
// cache-type sweep with managed `ollama serve` stand-ins, a missing model, a server that is not
// there, and one that fails and dies mid-run.

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/process/ports.h"
#include "tests/integration/harness.h"
#include "tests/integration/ollama_fixture_server.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

// q8_0 rows of the same shape: 34 bytes per block of 32 values.
constexpr std::int64_t kQ8BytesPerToken = 4 * 2 * (128 / 32 * 34);
constexpr std::int64_t kQ4BytesPerToken = 4 * 2 * (128 / 32 * 18);

using Fixture = OllamaFixtureServer;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// scenarios/quickstart.json with only the server changed.
std::string quickstart_on_ollama(const json& server) {
  json s = json::parse(read_text(std::string(KVBENCH_SOURCE_DIR) + "/scenarios/quickstart.json"),
                       nullptr, true, /*ignore_comments=*/true);
  s["server"] = server;
  return s.dump(2);
}

std::map<int, const json*> blocks_by_num_ctx(const json& run) {
  std::map<int, const json*> out;
  for (const auto& b : run["blocks"]) {
    out[b["num_ctx"].get<int>()] = &b;
  }
  return out;
}

TEST(Ollama, QuickstartRunsOnTheFixtureByChangingKindAndModel) {
  Fixture fixture;
  const fs::path dir = fresh_dir("ollama-quickstart");
  const std::string scenario =
      write_file(dir, "quickstart.json",
                 quickstart_on_ollama(
                     {{"kind", "ollama"}, {"model", "synthetic-small"}, {"url", fixture.url()}}));
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: attached to Ollama"));
  EXPECT_THAT(r.out, HasSubstr("| 4096 | f16 | 2048 |"));
  EXPECT_THAT(r.out, HasSubstr("reported no reused-token count"));
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["status"], "complete");
  EXPECT_EQ(run["server"]["kind"], "ollama");
  EXPECT_EQ(run["server"]["mode"], "attached");
  EXPECT_EQ(run["server"]["version"], "0.33.0-fixture");
  EXPECT_EQ(run["model"]["quantization_level"], "F16");
  EXPECT_EQ(run["model"]["shape"]["n_layer"], 4);
  EXPECT_EQ(run["model"]["kv_bytes_per_token"]["f16"], kF16BytesPerToken);
  ASSERT_EQ(run["blocks"].size(), 4U);  // the quick start's four blocks, on one attached server
  const auto& block = run["blocks"][0];
  EXPECT_EQ(block["memory"]["context_length"], 4096);
  EXPECT_TRUE(block["load_ms"].get<double>() > 0) << "the explicit load loaded the model";
  EXPECT_GE(block["calibration"]["probes"].size(), 2U);
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 40U);  // per block: 1 warm-up, 6 timed, 3 probes
  std::map<int, std::vector<double>> prompt_ms;
  for (const auto& c : calls) {
    ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_FALSE(c.expected_cache_n) << "no token ids, no prediction";
    EXPECT_FALSE(c.server.cache_n) << "Ollama does not report reuse";
    ASSERT_TRUE(c.server.prompt_n) << c.seq;
    // The calibrated prompt lands within two tokens of its target.
    EXPECT_NEAR(*c.server.prompt_n, c.prompt_tokens, 2) << c.seq;
    EXPECT_EQ(c.server.predicted_n, 128);
    EXPECT_EQ(c.client.tokens, 128);
    EXPECT_TRUE(c.server.raw.contains("eval_duration"));
    EXPECT_FALSE(c.server.raw.contains("load_duration")) << "loaded before the first call";
    if (c.kind == kvbench::CallKind::timed) {
      prompt_ms[c.prompt_tokens].push_back(*c.server.prompt_ms);
    }
  }
  EXPECT_LT(prompt_ms[256].front(), prompt_ms[2048].front());
}

// A newer Ollama reports prompt_eval_cached_count: every call then carries the server's reused
// count, a fresh first line shows it read cold, and a repeated prompt is flagged.
TEST(Ollama, NewerServersReportReusedTokensAndTheProofFollows) {
  Fixture fixture({{"OLLAMA_FIXTURE_CACHED_COUNT", "1"}}, "fixture-cached.log");
  const fs::path dir = fresh_dir("ollama-cached-count");
  for (const bool unique : {true, false}) {
    const fs::path runs = dir / (unique ? "unique" : "repeated");
    // Repeated: one prompt length, so every timed call resends what the slot holds.
    const std::string scenario = write_file(dir, unique ? "u.json" : "r.json",
                                            R"({"name": "c",
      "server": {"kind": "ollama", "model": "synthetic-small", "url": ")" +
                                                fixture.url() + R"("},
      "unique_first_line": )" + (unique ? "true" : "false") +
                                                R"(,
      "factors": {"prompt_tokens": )" + (unique ? "[256, 1024]" : "[512]") +
                                                R"(, "num_ctx": 4096},
      "repeats": 3, "max_tokens": 4})");
    const auto r = run_kvbench({"run", scenario, "--results", runs.string(), "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int timed = 0;
    for (const auto& c : read_calls(only_run_dir(runs))) {
      ASSERT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
      ASSERT_TRUE(c.server.cache_n) << "prompt_eval_cached_count read";
      if (c.kind != kvbench::CallKind::timed) {
        continue;
      }
      ++timed;
      const bool hit =
          std::find(c.flags.begin(), c.flags.end(), "prompt_cache_hit") != c.flags.end();
      if (unique) {
        EXPECT_FALSE(hit) << c.seq << ": " << *c.server.cache_n;
        EXPECT_LT(*c.server.cache_n, 16) << c.seq << ": only the common start of the first line";
      } else {
        EXPECT_TRUE(hit) << c.seq;
        EXPECT_GT(*c.server.cache_n, 400) << c.seq;
      }
    }
    EXPECT_EQ(timed, unique ? 6 : 3);
  }
}

TEST(Ollama, NumCtxSweepReadsMemoryFromApiPs) {
  Fixture fixture;
  const fs::path dir = fresh_dir("ollama-numctx");
  const std::string scenario = write_file(dir, "s.json",
                                          R"({"name": "numctx",
    "server": {"kind": "ollama", "model": "synthetic-small", "url": ")" +
                                              fixture.url() + R"("},
    "factors": {"prompt_tokens": [64], "num_ctx": [1024, 2048, 4096]},
    "repeats": 2, "warmup": 0, "max_tokens": 4})");
  const auto r =
      run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q", "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  const auto blocks = blocks_by_num_ctx(run);
  ASSERT_EQ(blocks.size(), 3U);
  for (const auto& [num_ctx, b] : blocks) {
    EXPECT_EQ((*b)["memory"]["context_length"], num_ctx);
    EXPECT_TRUE((*b)["load_ms"].get<double>() > 0) << "each num_ctx reloads the model";
  }
  const auto size = [&](int n) {
    return (*blocks.at(n))["memory"]["size_bytes"].get<std::int64_t>();
  };
  EXPECT_EQ(size(2048) - size(1024), 1024 * kF16BytesPerToken);
  EXPECT_EQ(size(4096) - size(1024), 3072 * kF16BytesPerToken);
  EXPECT_EQ(run["model"]["kv_bytes_per_token"]["f16"], kF16BytesPerToken)
      << "kvbench's KV arithmetic from /api/show agrees with the server's memory";
  EXPECT_THAT(r.out, HasSubstr("| Ollama's /api/ps size after load | 3 | 2048 | [2048, 2048] |"));
  EXPECT_THAT(r.out, HasSubstr("- Ollama's /api/ps size after load: **f16 = bf16** explains the "
                               "slope (slope / arithmetic = 1.000"));
  for (const auto& c : read_calls(run_dir)) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    EXPECT_FALSE(c.server.raw.contains("load_duration")) << "no call paid for a load";
  }
}

TEST(Ollama, CacheTypeSweepStartsOneManagedServerPerBlock) {
  const fs::path dir = fresh_dir("ollama-cachetype");
  const std::string scenario = write_file(dir, "s.json",
                                          R"({"name": "cachetype",
    "server": {"kind": "ollama", "model": "synthetic-small", "binary": ")" +
                                              std::string(KVBENCH_OLLAMA_FIXTURE) + R"("},
    "factors": {"prompt_tokens": [64], "num_ctx": [2048], "cache_type": ["f16", "q8_0", "q4_0"]},
    "repeats": 2, "warmup": 0, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["server"]["mode"], "managed");
  EXPECT_EQ(run["server"]["version"], "0.33.0-fixture");
  std::map<std::string, std::int64_t> size;
  for (const auto& b : run["blocks"]) {
    const std::string type = b["cache_type"];
    EXPECT_EQ(b["env"]["OLLAMA_KV_CACHE_TYPE"], type);
    EXPECT_EQ(b["env"]["OLLAMA_FLASH_ATTENTION"], "1");
    EXPECT_EQ(b["env"]["OLLAMA_NUM_PARALLEL"], "1");
    const std::string host = b["env"]["OLLAMA_HOST"];
    EXPECT_EQ(b["url"], "http://" + host);
    EXPECT_EQ(b["argv"].back(), "serve");
    EXPECT_TRUE(fs::exists(run_dir / b["log"].get<std::string>()));
    size[type] = b["memory"]["size_bytes"].get<std::int64_t>();
    const pid_t pid = b["pid"].get<int>();
    EXPECT_NE(::kill(pid, 0), 0) << "the server of block " << b["index"] << " is still running";
  }
  ASSERT_EQ(size.size(), 3U);
  EXPECT_EQ(size["f16"] - size["q8_0"], 2048 * (kF16BytesPerToken - kQ8BytesPerToken));
  EXPECT_EQ(size["f16"] - size["q4_0"], 2048 * (kF16BytesPerToken - kQ4BytesPerToken));
  EXPECT_EQ(run["model"]["kv_bytes_per_token"]["q8_0"], kQ8BytesPerToken);
  EXPECT_EQ(run["model"]["kv_bytes_per_token"]["q4_0"], kQ4BytesPerToken);
  for (const auto& c : read_calls(run_dir)) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
  }
}

TEST(Ollama, MissingModelNamesOllamaPullAndWritesNothing) {
  Fixture fixture;
  const fs::path dir = fresh_dir("ollama-missing");
  for (const std::string& server :
       {R"("url": ")" + fixture.url() + R"(")",
        R"("binary": ")" + std::string(KVBENCH_OLLAMA_FIXTURE) + R"(")"}) {
    const std::string scenario = write_file(dir, "s.json",
                                            R"({"name": "missing",
      "server": {"kind": "ollama", "model": "llama3.2:1b", )" +
                                                server + R"(},
      "factors": {"prompt_tokens": [64]}})");
    const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("`ollama pull llama3.2:1b`"));
    EXPECT_FALSE(fs::exists(dir / "runs")) << "nothing is written";
  }
}

TEST(Ollama, ServerThatIsNotRunningNamesTheUrl) {
  const int port = process::find_free_loopback_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const fs::path dir = fresh_dir("ollama-notrunning");
  const std::string scenario = write_file(dir, "s.json",
                                          R"({"name": "down",
    "server": {"kind": "ollama", "model": "synthetic-small", "url": ")" +
                                              url + R"("},
    "factors": {"prompt_tokens": [64]}})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no Ollama server answers at " + url));
  EXPECT_FALSE(fs::exists(dir / "runs"));
}

TEST(Ollama, ServerThatFailsAndDiesMidRunIsRecordedCallByCall) {
  // The third streamed call ends in an error line, the fifth loses the server mid-stream.
  Fixture fixture({{"OLLAMA_FIXTURE_ERROR_ON", "3"}, {"OLLAMA_FIXTURE_EXIT_ON", "5"}},
                  "fixture-dies.log");
  const fs::path dir = fresh_dir("ollama-dies");
  const std::string scenario = write_file(dir, "s.json",
                                          R"({"name": "dies",
    "server": {"kind": "ollama", "model": "synthetic-small", "url": ")" +
                                              fixture.url() + R"("},
    "factors": {"prompt_tokens": [64, 128], "num_ctx": [1024]},
    "repeats": 4, "warmup": 0, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  // Every call recorded and the run complete, but most failed: short of the plan, exit 3.
  ASSERT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("of 8 timed calls failed"));
  const fs::path run_dir = only_run_dir(dir / "runs");
  EXPECT_EQ(read_json(run_dir / "run.json")["status"], "complete");
  const auto calls = read_calls(run_dir);  // in the order they ran
  ASSERT_EQ(calls.size(), 8U);
  EXPECT_EQ(calls[0].outcome, kvbench::Outcome::ok);
  EXPECT_EQ(calls[1].outcome, kvbench::Outcome::ok);
  EXPECT_EQ(calls[2].outcome, kvbench::Outcome::server_error);
  EXPECT_THAT(calls[2].error, HasSubstr("fixture fault"));
  EXPECT_EQ(calls[2].http_status, 200);
  EXPECT_EQ(calls[2].client.tokens, 2);
  EXPECT_EQ(calls[3].outcome, kvbench::Outcome::ok);
  EXPECT_NE(calls[4].outcome, kvbench::Outcome::ok);
  EXPECT_EQ(calls[4].client.tokens, 2);
  for (std::size_t i = 5; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].outcome, kvbench::Outcome::connect_error) << i;
  }
  EXPECT_FALSE(fixture.running());
}

}  // namespace
}  // namespace kvbench::itest
