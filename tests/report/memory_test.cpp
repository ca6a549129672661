// The memory analysis over run.json: slopes against num_ctx with the arithmetic of every cache
// type, the lesson's surprise found from its own figures, ratios between cache types, notes.

#include "harness/report/memory.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvbench::report {
namespace {

using namespace analysis;  // the statistics these printers print

using nlohmann::json;
using ::testing::HasSubstr;

// The analysis of a run.json written as JSON, read as kvbench reads it.
MemoryAnalysis analyze_run(const json& run) {
  return analyze_memory(results::manifest_from_json(run, "run.json"));
}

json shape(int layers, int kv_heads, int head_dim) {
  return {{"n_layer", layers},
          {"n_head_kv", kv_heads},
          {"head_dim_k", head_dim},
          {"head_dim_v", head_dim}};
}

json memory_block(int index, int num_ctx, const std::string& type, std::uint64_t rss,
                  std::optional<std::uint64_t> kv_logged) {
  json b = {{"index", index},
            {"num_ctx", num_ctx},
            {"cache_type", type},
            {"memory_after_load", {{"rss_bytes", rss}}},
            {"memory_after_longest_prompt", {{"rss_bytes", rss + 1048576}, {"prompt_tokens", 64}}},
            {"peak_rss_bytes", rss + 2097152}};
  if (kv_logged) {
    b["kv_bytes_logged"] = *kv_logged;
  }
  return b;
}

TEST(MemoryReport, LessonFiguresNameQ8AsClosestButNoneWithinTolerance) {
  // The lesson's Ollama figures for qwen2.5:3b: 2.046 / 2.262 / 2.793 GB at 2048 / 8192 / 32768.
  const json run = {{"model", {{"shape", shape(36, 2, 128)}}},
                    {"blocks",
                     {memory_block(0, 2048, "f16", 2046000000, std::nullopt),
                      memory_block(1, 8192, "f16", 2262000000, std::nullopt),
                      memory_block(2, 32768, "f16", 2793000000, std::nullopt)}}};
  const auto a = analyze_run(run);
  ASSERT_EQ(a.sweeps.size(), 1U);
  ASSERT_EQ(a.sweeps[0].fits.size(), 1U);
  const SlopeFit& f = a.sweeps[0].fits[0];
  EXPECT_EQ(f.measure, "rss_after_load");
  EXPECT_EQ(f.n, 3U);
  EXPECT_NEAR(f.bytes_per_token, 23542.13, 0.01);
  ASSERT_TRUE(f.ci_lower && f.ci_upper);
  EXPECT_LT(*f.ci_lower, f.bytes_per_token);
  EXPECT_GT(*f.ci_upper, f.bytes_per_token);
  EXPECT_EQ(f.closest_type, "q8_0");
  EXPECT_NEAR(f.closest_ratio, 23542.13 / 19584.0, 1e-6);
  EXPECT_TRUE(f.explaining.empty());
  std::ostringstream md;
  write_memory_markdown(md, a);
  EXPECT_THAT(md.str(), HasSubstr("no cache type's arithmetic is within 10% of the slope; the "
                                  "closest is q8_0 (its arithmetic explains 0.83 of the slope)"));
  EXPECT_THAT(md.str(), HasSubstr("| 2 | 32768 | 32768 | f16 | - | 1152.00 |"));
}

TEST(MemoryReport, ExactLogAndNoisyResidentMemoryNameTheServersType) {
  // lesson preset: 4,096 B a token at f16, 2,176 at q8_0.
  json blocks = json::array();
  int i = 0;
  for (const int ctx : {2048, 8192, 32768}) {
    const std::uint64_t cells = static_cast<std::uint64_t>(ctx);
    const std::uint64_t noise = ctx == 8192 ? 300000 : 0;
    blocks.push_back(memory_block(i, ctx, "q8_0", 100000000 + cells * 2200 + noise, cells * 2176));
    blocks.push_back(memory_block(i + 1, ctx, "f16", 100000000 + cells * 4100, cells * 4096));
    i += 2;
  }
  const json run = {{"model", {{"shape", shape(8, 2, 64)}}}, {"blocks", blocks}};
  const auto a = analyze_run(run);
  ASSERT_EQ(a.sweeps.size(), 2U);
  EXPECT_EQ(a.sweeps[0].cache_type, "f16");
  for (const auto& s : a.sweeps) {
    ASSERT_EQ(s.fits.size(), 2U);
    EXPECT_EQ(s.fits[0].measure, "kv_logged");
    for (const auto& f : s.fits) {
      EXPECT_EQ(f.closest_type, s.cache_type) << f.measure;
      ASSERT_FALSE(f.explaining.empty());
      EXPECT_EQ(f.explaining[0], s.cache_type);
    }
  }
  EXPECT_DOUBLE_EQ(a.sweeps[0].fits[0].bytes_per_token, 4096.0);
  EXPECT_NEAR(a.sweeps[1].fits[0].bytes_per_token, 2176.0, 1e-6);
  // q8_0's neighbours: no other type is within 10% of 2,176 B.
  EXPECT_EQ(a.sweeps[1].fits[0].explaining.size(), 1U);
  ASSERT_EQ(a.comparisons.size(), 3U);
  for (const auto& c : a.comparisons) {
    EXPECT_EQ(c.reference, "f16");
    EXPECT_EQ(c.type, "q8_0");
    EXPECT_DOUBLE_EQ(*c.arithmetic_ratio, 34.0 / 64.0);
    EXPECT_DOUBLE_EQ(*c.kv_logged_ratio, 34.0 / 64.0);
    EXPECT_DOUBLE_EQ(*c.arithmetic_difference_bytes, 1920.0 * c.num_ctx);
  }
  const json j = memory_json(a);
  EXPECT_EQ(j["ctx_sweeps"][1]["fits"][0]["closest_type"], "q8_0");
  EXPECT_EQ(j["blocks"].size(), 6U);
}

TEST(MemoryReport, TwoContextsGiveASlopeWithoutCi) {
  const auto f = fit_slope("kv_logged", {2048, 8192}, {2048.0 * 4096, 8192.0 * 4096},
                           results::model_shape({{"shape", shape(8, 2, 64)}}));
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(f->bytes_per_token, 4096.0);
  EXPECT_FALSE(f->ci_lower);
  // f16 and bf16 have the same arithmetic: both explain it.
  EXPECT_THAT(f->explaining, ::testing::ElementsAre("f16", "bf16"));
  EXPECT_FALSE(fit_slope("kv_logged", {2048, 2048}, {1, 2}, std::nullopt));
  EXPECT_FALSE(fit_slope("kv_logged", {2048}, {1}, std::nullopt));
}

TEST(MemoryReport, ReservedUpFrontAndNotes) {
  json b = memory_block(0, 4096, "f16", 200000000, std::nullopt);
  b["memory_notes"] = {"the server's log has no KV cache size lines"};
  const json run = {{"model", {{"shape", shape(8, 2, 64)}}}, {"blocks", {b}}};
  std::ostringstream md;
  write_memory_markdown(md, analyze_run(run));
  // 1 MiB of growth against a 16 MiB KV cache.
  EXPECT_THAT(md.str(), HasSubstr("| yes (grew 1.00 MiB, 6% of the KV size) |"));
  EXPECT_THAT(md.str(), HasSubstr("- block 0: the server's log has no KV cache size lines"));
}

TEST(MemoryReport, OllamaApiPsSizeGivesTheSlope) {
  // Ollama blocks carry GET /api/ps's size, no resident memory: weights + 2 layers x 2 KV heads
  // x 64 x K and V x 2 bytes (f16) = 1024 bytes per token.
  auto ps_block = [](int index, int num_ctx) {
    return json{{"index", index},
                {"num_ctx", num_ctx},
                {"cache_type", "q8_0"},
                {"memory", {{"size_bytes", 5000000U + 1024U * static_cast<unsigned>(num_ctx)}}}};
  };
  const json run = {{"model", {{"shape", shape(2, 2, 64)}}},
                    {"blocks", {ps_block(0, 1024), ps_block(1, 2048), ps_block(2, 4096)}}};
  const auto a = analyze_run(run);
  ASSERT_EQ(a.blocks.size(), 3U);
  EXPECT_EQ(a.blocks[1].ollama_size_bytes, 5000000U + 1024U * 2048);
  ASSERT_EQ(a.sweeps.size(), 1U);
  ASSERT_EQ(a.sweeps[0].fits.size(), 1U);
  const SlopeFit& f = a.sweeps[0].fits[0];
  EXPECT_EQ(f.measure, "ollama_size");
  EXPECT_NEAR(f.bytes_per_token, 1024.0, 1e-6);
  EXPECT_EQ(f.explaining.front(), "f16") << "the size says f16 where q8_0 was asked for";
  std::ostringstream md;
  write_memory_markdown(md, a);
  EXPECT_THAT(md.str(), HasSubstr("- Ollama's /api/ps size after load: **f16 = bf16** explains"));
}

TEST(MemoryReport, ParallelSlotsMultiplyTheCellsOnEitherServer) {
  // Two KV heads of 64 in 2 layers, f16: 1024 bytes per token.
  auto ps_block = [](int index, json parallel) {
    return json{{"index", index},           {"num_ctx", 1024},
                {"cache_type", "f16"},      {"slots", 4},
                {"num_parallel", parallel}, {"memory", {{"size_bytes", 5000000U}}}};
  };
  json llama = ps_block(2, 0);
  llama.erase("num_parallel");
  json one_at_a_time = ps_block(3, 0);
  one_at_a_time.erase("num_parallel");
  one_at_a_time.erase("slots");
  const json run = {{"model", {{"shape", shape(2, 2, 64)}}},
                    {"blocks", {ps_block(0, 4), ps_block(1, nullptr), llama, one_at_a_time}}};
  const auto a = analyze_run(run);
  ASSERT_EQ(a.blocks.size(), 4U);
  EXPECT_EQ(a.blocks[0].cells, 4096U) << "OLLAMA_NUM_PARALLEL=4: four slots of 1024";
  EXPECT_EQ(a.blocks[0].kv_arithmetic_bytes, 4096U * 1024U);
  EXPECT_FALSE(a.blocks[1].kv_arithmetic_bytes) << "attached Ollama: its slots are unknown";
  EXPECT_EQ(a.blocks[2].cells, 4096U) << "llama-server -np 4 -c 4096";
  EXPECT_EQ(a.blocks[3].cells, 1024U);
}

TEST(MemoryReport, NothingWithoutMemory) {
  const json run = {{"blocks", {{{"index", 0}, {"num_ctx", 4096}, {"cache_type", "f16"}}}}};
  std::ostringstream md;
  write_memory_markdown(md, analyze_run(run));
  EXPECT_EQ(md.str(), "");
  EXPECT_FALSE(results::manifest_from_json(run, "run.json").shape());
}

}  // namespace
}  // namespace kvbench::report
