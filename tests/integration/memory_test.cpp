// Memory on the real llama-server: the KV arithmetic equals what the server logs for an odd
// synthetic shape and every cache type it accepts; a num_ctx sweep finds the f16 arithmetic for
// an f16 server and the q8_0 arithmetic for a q8_0 server, from the logged KV size and from
// resident memory; a server whose log lacks the KV lines still has its memory read from /proc.

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr double kMib = 1024.0 * 1024.0;

std::string synth(const fs::path& dir, const std::vector<std::string>& shape) {
  const std::string path = (dir / "model.gguf").string();
  std::vector<std::string> args{"model", "synth", "-o", path};
  args.insert(args.end(), shape.begin(), shape.end());
  const auto r = run_kvbench(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

std::string scenario_json(const std::string& name, const std::string& model,
                          const std::string& num_ctx, const std::string& cache_types,
                          const std::string& extra = "") {
  return fmt::format(
      R"({{"name": "{}", "server": {{"kind": "llama-server", "model": "{}"{}}},
          "factors": {{"prompt_tokens": [48], "num_ctx": [{}], "cache_type": [{}]}},
          "repeats": 1, "warmup": 0, "max_tokens": 2}})",
      name, model, extra, num_ctx, cache_types);
}

std::string mib2(double bytes) {
  return fmt::format("{:.2f}", bytes / kMib);
}

TEST(Memory, CalculatorEqualsTheServerLogForAnOddShape) {
  const fs::path dir = fresh_dir("kv-odd-shape");
  // 12 layers, 6 heads of 96 (576 wide), 3 KV heads: a row of 288 numbers, 9 blocks of 32.
  const std::string model = synth(
      dir, {"--layers", "12", "--embd", "576", "--heads", "6", "--kv-heads", "3", "--ff", "128"});
  const auto calc = run_kvbench({"kv", model, "-c", "4096", "--json"});
  ASSERT_EQ(calc.exit_code, 0) << calc.err;
  const auto arithmetic = nlohmann::json::parse(calc.out);
  EXPECT_EQ(arithmetic["cache_types"][1]["type"], "f16");
  EXPECT_EQ(arithmetic["cache_types"][1]["bytes_per_token"], 13824);
  EXPECT_EQ(arithmetic["cache_types"][3]["bytes_per_token"], 7344);  // q8_0

  const std::string all =
      R"("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")";
  const auto r =
      run_kvbench({"run", write_file(dir, "s.json", scenario_json("odd", model, "4096", all)),
                   "--results", (dir / "results").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = read_json(only_run_dir(dir / "results") / "run.json");
  std::vector<std::string> compared;
  for (const auto& t : arithmetic["cache_types"]) {
    const std::string type = t["type"];
    for (const auto& b : run["blocks"]) {
      if (b["cache_type"] != type || !b.contains("server_log_memory") ||
          b["server_log_memory"]["kv"].empty()) {
        continue;
      }
      const auto& kv = b["server_log_memory"]["kv"][0];
      const double bytes = t["totals"][0]["bytes"].get<double>();
      EXPECT_EQ(kv["cells"], 4096) << type;
      EXPECT_EQ(kv["layers"], 12) << type;
      EXPECT_EQ(kv["type_k"], type);
      EXPECT_EQ(kv["type_v"], type);
      // The log prints MiB with two decimals: the arithmetic, printed the same way, is equal.
      EXPECT_EQ(mib2(bytes), fmt::format("{:.2f}", kv["size_mib"].get<double>())) << type;
      EXPECT_EQ(mib2(bytes / 2), fmt::format("{:.2f}", kv["k_mib"].get<double>())) << type;
      EXPECT_EQ(mib2(bytes / 2), fmt::format("{:.2f}", kv["v_mib"].get<double>())) << type;
      compared.push_back(type);
    }
  }
  std::cout << "cache types the server accepted and logged: "
            << fmt::format("{}", fmt::join(compared, ", ")) << "\n";
  EXPECT_THAT(compared, ::testing::IsSupersetOf({"f32", "f16", "q8_0", "q4_0"}));
}

TEST(Memory, CtxSweepFindsTheCacheTypeFromTheSlope) {
  const fs::path dir = fresh_dir("kv-ctx-sweep");
  // 8 layers with 8 KV heads of 64: 16,384 B a token at f16, so each step adds tens of MiB.
  const std::string model = synth(
      dir, {"--layers", "8", "--embd", "512", "--heads", "8", "--kv-heads", "8", "--ff", "256"});
  const auto r = run_kvbench(
      {"run",
       write_file(dir, "s.json",
                  scenario_json("sweep", model, "2048, 8192, 16384", R"("f16", "q8_0")")),
       "--results", (dir / "results").string(), "-q", "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("### Memory against num_ctx, server cache type q8_0"));
  const fs::path run_dir = only_run_dir(dir / "results");
  for (const auto& b : read_json(run_dir / "run.json")["blocks"]) {
    EXPECT_TRUE(b.contains("memory_after_load")) << b["index"];
    EXPECT_TRUE(b.contains("memory_after_longest_prompt")) << b["index"];
    EXPECT_TRUE(b.contains("kv_bytes_logged")) << b["index"];
    EXPECT_GE(b["peak_rss_bytes"].get<double>(), b["memory_after_load"]["rss_bytes"].get<double>());
    EXPECT_FALSE(b.contains("memory_notes")) << b["memory_notes"];
  }
  const auto rep = run_kvbench({"report", run_dir.string(), "--json", (dir / "r.json").string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  std::cout << rep.out.substr(rep.out.find("## Memory")) << "\n";
  const auto memory = read_json(dir / "r.json")["memory"];
  const std::map<std::string, double> arithmetic{{"f16", 16384}, {"q8_0", 8704}};
  ASSERT_EQ(memory["ctx_sweeps"].size(), 2U);
  for (const auto& sweep : memory["ctx_sweeps"]) {
    const std::string type = sweep["cache_type"];
    ASSERT_EQ(sweep["fits"].size(), 2U) << type;
    for (const auto& fit : sweep["fits"]) {
      const double slope = fit["bytes_per_token"];
      EXPECT_EQ(fit["closest_type"], type) << fit["measure"];
      EXPECT_EQ(fit["explaining"][0], type) << fit["measure"];
      const double tolerance = fit["measure"] == "kv_logged" ? 0.001 : 0.10;
      EXPECT_NEAR(slope / arithmetic.at(type), 1.0, tolerance) << type << " " << fit["measure"];
    }
  }
  ASSERT_EQ(memory["cache_type_comparisons"].size(), 3U);
  for (const auto& c : memory["cache_type_comparisons"]) {
    EXPECT_EQ(c["reference"], "f16");
    EXPECT_DOUBLE_EQ(c["arithmetic_ratio"].get<double>(), 34.0 / 64.0);
    EXPECT_NEAR(c["kv_logged_ratio"].get<double>(), 34.0 / 64.0, 0.001);
  }
}

TEST(Memory, ALogWithoutKvLinesStillHasMemoryFromProc) {
  const fs::path dir = fresh_dir("kv-no-log-lines");
  const fs::path wrapper = dir / "quiet-llama-server.sh";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\nexec '" << llama_server_path() << "' \"$@\" >/dev/null 2>&1\n";
  }
  ::chmod(wrapper.c_str(), 0755);
  const auto r = run_kvbench(
      {"run",
       write_file(dir, "s.json", scenario_json("quiet", "synthetic:tiny", "1024", R"("f16")")),
       "--results", (dir / "results").string(), "--server-bin", wrapper.string(), "-q",
       "--detail"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = read_json(only_run_dir(dir / "results") / "run.json");
  ASSERT_EQ(run["blocks"].size(), 1U);
  const auto& b = run["blocks"][0];
  EXPECT_GT(b["memory_after_load"]["rss_bytes"].get<double>(), 0);
  EXPECT_FALSE(b.contains("kv_bytes_logged"));
  ASSERT_TRUE(b.contains("memory_notes"));
  EXPECT_THAT(b["memory_notes"][0].get<std::string>(), HasSubstr("no KV cache size lines"));
  EXPECT_THAT(r.out, HasSubstr("block 0: the server's log (server-block0.log) has no KV cache"));
}

}  // namespace
}  // namespace kvbench::itest
