// A measurement in one line on the real llama-server: flags edit the bundled quick start (or a
// file), the scenario they made can be written out and plans exactly as the flags do, and a
// server started by hand is measured by its URL alone.

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(OneLiner, FlagsEditTheQuickStartAndTheScenarioTheyMadePlansTheSame) {
  const fs::path dir = fresh_dir("one_liner");
  const std::vector<std::string> flags = {"--model",         "synthetic:small",
                                          "--prompt-tokens", "64,192",
                                          "--num-ctx",       "1024",
                                          "--cache-type",    "f16,q8_0",
                                          "--repeats",       "2",
                                          "--block-repeats", "1",
                                          "--max-tokens",    "4",
                                          "--set",           "probes.every=0"};
  std::vector<std::string> run = {"run", "--results",      (dir / "runs").string(),
                                  "-q",  "--scenario-out", (dir / "made.json").string()};
  run.insert(run.end(), flags.begin(), flags.end());
  const auto r = run_kvbench(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run_dir = only_run_dir(dir / "runs");
  const auto manifest = read_json(run_dir / "run.json");
  EXPECT_EQ(manifest["scenario"]["name"], "kvbench-p64-192-ctx1024-f16-q8_0");
  EXPECT_EQ(manifest["scenario"]["factors"]["cache_type"], nlohmann::json::parse(R"(["f16",
    "q8_0"])"));
  const auto calls = read_calls(run_dir);
  int timed = 0;
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    timed += c.kind == kvbench::CallKind::timed ? 1 : 0;
  }
  EXPECT_EQ(timed, 2 * 2 * 2) << "2 lengths x 2 cache types x 2 rounds";
  // The file it wrote is the scenario the run kept, and plans the same calls as the flags.
  EXPECT_EQ(read_json(dir / "made.json"), manifest["scenario"]);
  std::vector<std::string> plan = {"plan", "--json"};
  plan.insert(plan.end(), flags.begin() + 2, flags.end());  // plan has no --model
  const auto from_flags = run_kvbench(plan);
  ASSERT_EQ(from_flags.exit_code, 0) << from_flags.err;
  const auto from_file = run_kvbench({"plan", "--json", (dir / "made.json").string()});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_flags.out, from_file.out);
  // A flag's bad value is refused as the field in a file is, before anything runs.
  const auto bad = run_kvbench({"run", "--results", (dir / "bad").string(), "--num-ctx", "100"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("the quick start with --num-ctx: factors.num_ctx"));
  EXPECT_FALSE(fs::exists(dir / "bad"));
}

TEST(OneLiner, AServerStartedByHandIsMeasuredByItsUrl) {
  const fs::path dir = fresh_dir("one_liner_url");
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const int port = 20000 + static_cast<int>(::getpid() % 2000);
  auto server = serve_by_hand(dir / "tiny.gguf", port, dir / "server.log");
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  ASSERT_TRUE(answers_soon(url + "/health", {}, 200));
  const auto r =
      run_kvbench({"run", "--url", url, "--prompt-tokens", "100,300", "--num-ctx", "1024",
                   "--max-tokens", "4", "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("found llama-server at " + url + " (GET /props answered"));
  const auto run_dir = only_run_dir(dir / "runs");
  const auto manifest = read_json(run_dir / "run.json");
  EXPECT_EQ(manifest["server"]["mode"], "attached");
  EXPECT_EQ(manifest["server"]["found"]["kind"], "llama-server");
  EXPECT_EQ(manifest["server"]["found"]["reports"]["total_slots"], 1);
  EXPECT_EQ(manifest["server"]["found"]["stated"]["num_ctx"]["check"], "confirmed");
  EXPECT_EQ(manifest["scenario"]["block_repeats"], 1) << "an attached server is one start";
  EXPECT_EQ(manifest["scenario"]["repeats"], 8) << "the quick start's rounds in that start";
  int timed = 0;
  for (const auto& c : read_calls(run_dir)) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    EXPECT_TRUE(c.flags.empty()) << c.seq << " every call proved cold";
    timed += c.kind == kvbench::CallKind::timed ? 1 : 0;
  }
  EXPECT_EQ(timed, 16);
  EXPECT_THAT(read_json(run_dir / "summary.json").dump(), HasSubstr("this_start"));
  // The same server through its OpenAI API: the /v1 base found, the model the server has.
  const auto openai =
      run_kvbench({"run", "--url", url, "--kind", "openai", "--prompt-tokens", "100", "--repeats",
                   "2", "--max-tokens", "4", "--results", (dir / "openai").string(), "-q"});
  ASSERT_EQ(openai.exit_code, 0) << openai.err;
  const auto openai_run = read_json(only_run_dir(dir / "openai") / "run.json");
  EXPECT_EQ(openai_run["scenario"]["server"]["url"], url + "/v1");
  EXPECT_EQ(openai_run["scenario"]["server"]["model"], (dir / "tiny.gguf").string());
  EXPECT_EQ(openai_run["scenario"]["factors"]["num_ctx"][0], 1024) << "the server's context";
  for (const auto& c : read_calls(only_run_dir(dir / "openai"))) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.error;
    // (The warm-up may reuse what the run before left in the server's slot.)
    EXPECT_TRUE(c.kind != kvbench::CallKind::timed || c.flags.empty())
        << c.seq << " proved through /v1 too";
  }
  // A kind the server is not is refused, naming both.
  const auto ollama = run_kvbench({"run", "--url", url + "/v1", "--kind", "ollama", "--model",
                                   "llama3.2:1b", "--results", (dir / "x").string()});
  EXPECT_EQ(ollama.exit_code, 2);
  EXPECT_THAT(ollama.err,
              HasSubstr("server.kind is 'ollama', but the server at " + url +
                        " answers as llama-server (GET /props): name --kind llama-server"));
  // A factor only a restart changes cannot vary on a server kvbench did not start.
  const auto two_types =
      run_kvbench({"run", "--url", url, "--cache-type", "f16,q8_0", "--prompt-tokens", "100",
                   "--num-ctx", "1024", "--results", (dir / "x").string()});
  EXPECT_EQ(two_types.exit_code, 2);
  EXPECT_THAT(two_types.err,
              HasSubstr("the quick start with --prompt-tokens, --num-ctx, --cache-type: --url: an "
                        "attached server cannot vary factors.cache_type (f16, "
                        "q8_0)"));
  server.stop(std::chrono::milliseconds(3000));
  // Nothing listens there now: exit 1, nothing written.
  const auto gone = run_kvbench({"run", "--url", url, "--prompt-tokens", "100", "--num-ctx", "1024",
                                 "--results", (dir / "y").string(), "-q"});
  EXPECT_EQ(gone.exit_code, 1) << gone.err;
  EXPECT_THAT(gone.err, HasSubstr("answers as no kind kvbench knows (GET /props, /api/version "
                                  "and /v1/models at " +
                                  url + ": "));
  EXPECT_FALSE(fs::exists(dir / "x"));
  EXPECT_FALSE(fs::exists(dir / "y"));
}

// Two models side by side in one line: a variant each, named by the model, blocks A B B A.
TEST(OneLiner, TwoModelsAreComparedSideBySide) {
  const fs::path dir = fresh_dir("one_liner_models");
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const auto r = run_kvbench(
      {"run", "--model", "synthetic:tiny", "--model", (dir / "tiny.gguf").string(),
       "--prompt-tokens", "64,192", "--repeats", "1", "--block-repeats", "1", "--max-tokens", "4",
       "--set", "probes.every=0", "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto manifest = read_json(only_run_dir(dir / "runs") / "run.json");
  EXPECT_EQ(manifest["scenario"]["name"], "kvbench-p64-192-tiny-vs-tiny-2");
  ASSERT_EQ(manifest["variants"].size(), 2U);
  EXPECT_EQ(manifest["variants"][1]["name"], "tiny-2");
  EXPECT_EQ(manifest["variants"][1]["server"]["model"], (dir / "tiny.gguf").string());
  std::vector<std::string> order;
  for (const auto& b : manifest["blocks"]) {
    order.push_back(b["variant"].get<std::string>());
  }
  EXPECT_EQ(order.size(), 4U);
  EXPECT_EQ(order.front(), order.back()) << "A B B A";
}

// Layers on a GPU (a fixture nvidia-smi on the PATH lists one with 0.2 GiB free): a plan whose
// share does not fit is refused before any server starts; one that fits starts llama-server with
// -ngl (a CPU build ignores it).
TEST(OneLiner, GpuLayersAreHeldAgainstTheGpusFreeMemory) {
  const fs::path dir = fresh_dir("one_liner_gpu");
  const auto synth = run_kvbench({"model", "synth", "--preset", "tiny", "--ctx-train", "2048", "-o",
                                  (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  fs::create_directories(dir / "bin");
  write_file(dir / "bin", "nvidia-smi",
             "#!/bin/sh\n# fixture: one GPU, 8192 MiB of which 8000 used\n"
             "echo '0, 8192, 8000, 550.54.15, NVIDIA Fixture'\n");
  fs::permissions(dir / "bin" / "nvidia-smi", fs::perms::owner_all);
  const std::vector<std::pair<std::string, std::string>> path = {
      {"PATH", (dir / "bin").string() + ":" + std::getenv("PATH")}};
  const auto big = run_kvbench(
      {"run", "--model", (dir / "tiny.gguf").string(), "--gpu-layers", "99", "--prompt-tokens",
       "64", "--num-ctx", "2097152", "--results", (dir / "big").string(), "-q"},
      600, path);
  EXPECT_EQ(big.exit_code, 2) << big.err;
  EXPECT_THAT(big.err, HasSubstr("puts 0.5 GiB on the GPU (2 of the model's 2 layers"));
  EXPECT_THAT(big.err, HasSubstr("free on GPU 0 (NVIDIA Fixture) (nvidia-smi)"));
  EXPECT_FALSE(fs::exists(dir / "big"));
  const auto fits =
      run_kvbench({"run", "--model", (dir / "tiny.gguf").string(), "--gpu-layers", "99",
                   "--prompt-tokens", "64", "--repeats", "1", "--block-repeats", "1",
                   "--max-tokens", "4", "--results", (dir / "fits").string(), "-q"},
                  600, path);
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  const auto manifest = read_json(only_run_dir(dir / "fits") / "run.json");
  EXPECT_EQ(manifest["scenario"]["server"]["gpu_layers"], 99);
  EXPECT_THAT(manifest["blocks"][0]["argv"].dump(), HasSubstr(R"("-ngl","99")"));
  // The quick start's 4,096 tokens are beyond this model's trained 2,048: the report says so.
  std::ifstream md(only_run_dir(dir / "fits") / "report.md");
  const std::string report((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_THAT(report, HasSubstr("- model: warning: num_ctx 4096 is beyond the model's trained "
                                "context of 2048 tokens"));
}

// q8_0 keys with f16 values against f16 for both, on the real server: each block started with its
// pair, the arithmetic per half equal to the log's K and V sizes, the effect named by its half.
TEST(OneLiner, KeysAndValuesTakeTheirOwnCacheTypes) {
  const fs::path dir = fresh_dir("one_liner_kv");
  const auto r = run_kvbench({"run",
                              "--cache-type-k",
                              "f16,q8_0",
                              "--cache-type-v",
                              "f16",
                              "--prompt-tokens",
                              "256,768",
                              "--num-ctx",
                              "1024",
                              "--repeats",
                              "2",
                              "--block-repeats",
                              "1",
                              "--max-tokens",
                              "4",
                              "--set",
                              "probes.every=0",
                              "--results",
                              (dir / "runs").string(),
                              "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run_dir = only_run_dir(dir / "runs");
  const auto manifest = read_json(run_dir / "run.json");
  EXPECT_EQ(manifest["scenario"]["factors"]["cache_type_k"], nlohmann::json::parse(R"(["f16",
    "q8_0"])"));
  int split = 0;
  for (const auto& b : manifest["blocks"]) {
    if (b["cache_type"] == "q8_0/f16") {
      ++split;
      EXPECT_THAT(b["argv"].dump(), HasSubstr(R"("-ctk","q8_0","-ctv","f16")"));
    }
  }
  EXPECT_EQ(split, 1);
  const auto summary = read_json(run_dir / "summary.json");
  int checked = 0;
  for (const auto& b : summary["memory"]["blocks"]) {
    if (!b.contains("kv_halves")) {
      continue;
    }
    const auto& h = b["kv_halves"];
    ASSERT_TRUE(h["k_logged_bytes"].is_number()) << "the log's K and V line";
    // The log prints MiB with two decimals.
    EXPECT_NEAR(h["k_logged_bytes"].get<double>(), h["k_arithmetic_bytes"].get<double>(), 5243);
    EXPECT_NEAR(h["v_logged_bytes"].get<double>(), h["v_arithmetic_bytes"].get<double>(), 5243);
    EXPECT_LT(h["k_arithmetic_bytes"].get<double>(), h["v_arithmetic_bytes"].get<double>())
        << "q8_0 keys take fewer bytes than f16 values";
    ++checked;
  }
  EXPECT_EQ(checked, 1);
  EXPECT_THAT(summary["analysis"].dump(), HasSubstr("cache_type_k=q8_0"));
  EXPECT_THAT(summary["analysis"].dump(), ::testing::Not(HasSubstr("\"cache_type=q8_0")));
}

// A model whose KV cache at the planned window cannot fit (256 layers of 4 KV heads of 16: 64 KiB
// a token, 128 GiB at 2,097,152 tokens) is refused before any server starts; nothing is written.
TEST(OneLiner, APlanBeyondTheMemoryIsRefusedBeforeAnyServerStarts) {
  const fs::path dir = fresh_dir("one_liner_memory");
  const auto synth = run_kvbench({"model", "synth", "--preset", "tiny", "--layers", "256",
                                  "--kv-heads", "4", "-o", (dir / "deep.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const auto r =
      run_kvbench({"run", "--model", (dir / "deep.gguf").string(), "--prompt-tokens", "256",
                   "--num-ctx", "2097152", "--results", (dir / "runs").string(), "-q"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("num_ctx 2097152 with a f16 KV cache needs 128.0 GiB"));
  EXPECT_THAT(r.err, HasSubstr("of memory available (MemAvailable)"));
  EXPECT_THAT(r.err, HasSubstr("beyond the model's trained context of 32768 tokens"));
  EXPECT_FALSE(fs::exists(dir / "runs")) << "nothing written";
}

}  // namespace
}  // namespace kvbench::itest
