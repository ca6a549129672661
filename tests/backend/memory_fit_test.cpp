// Before a managed server starts: the model and its KV cache at every planned condition against
// the memory available, by llama.cpp's arithmetic; the largest condition named when it cannot fit.

#include "harness/servers/memory_fit.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/kv/kv_arith.h"

namespace kvbench::servers {
namespace {

using ::testing::HasSubstr;

// 2 layers, 2 KV heads of 64: f16 keeps 2 x 2 x 64 x 2 bytes x (K and V) = 1,024 bytes a token.
gguf::ModelShape shape() {
  auto s = kv::explicit_shape(2, 2, 64, 64);
  s.n_ctx_train = 4096;
  return s;
}

scenario::Scenario plan(const std::string& factors) {
  return scenario::parse_scenario(R"({"name": "m", "factors": )" + factors + "}", "m.json");
}

TEST(MemoryFit, EveryConditionIsTheModelPlusItsCache) {
  const auto s = plan(R"({"prompt_tokens": [256], "num_ctx": [4096, 8192],
    "cache_type": ["f16", "q8_0"]})");
  const auto fit = memory_fit(s, shape(), 1000, 1ULL << 30);
  ASSERT_EQ(fit.conditions.size(), 4U);
  EXPECT_EQ(fit.conditions[0].num_ctx, 4096);
  EXPECT_EQ(fit.conditions[0].cache_type, "f16");
  EXPECT_EQ(fit.conditions[0].kv_bytes, 4096U * 1024U);
  EXPECT_EQ(fit.conditions[0].need(), 4096U * 1024U + 1000U);
  // q8_0: blocks of 32 numbers in 34 bytes.
  EXPECT_EQ(fit.conditions[1].kv_bytes, 4096U * 2U * 2U * 64U * 2U * 34U / 32U);
  EXPECT_EQ(fit.conditions[2].kv_bytes, 8192U * 1024U);
  ASSERT_EQ(fit.warnings.size(), 1U) << "8192 is beyond the trained 4096";
  EXPECT_THAT(fit.warnings[0], HasSubstr("num_ctx 8192 is beyond the model's trained context"));
  EXPECT_NO_THROW(check_memory_fit(fit, "m.json", false));
}

TEST(MemoryFit, APlanThatCannotFitNamesItsLargestConditionUnlessForced) {
  const auto s = plan(R"({"prompt_tokens": [256], "num_ctx": [4096, 1048576]})");
  const auto fit = memory_fit(s, shape(), 512ULL << 20, 1ULL << 30);
  try {
    check_memory_fit(fit, "m.json", false);
    ADD_FAILURE() << "a 1 GiB KV cache and a 0.5 GiB model fit in 1 GiB";
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_THAT(e.what(), HasSubstr("m.json: num_ctx 1048576 with a f16 KV cache needs 1.5 GiB "
                                    "(the model file 0.5 GiB and its KV cache 1.0 GiB), more "
                                    "than the 1.0 GiB of memory available (MemAvailable)"));
    EXPECT_THAT(e.what(), HasSubstr("give --force"));
  }
  EXPECT_NO_THROW(check_memory_fit(fit, "m.json", true));
  EXPECT_NO_THROW(check_memory_fit(memory_fit(s, shape(), 0, std::nullopt), "m.json", false))
      << "memory unknown: nothing to hold it against";
}

// With layers on a GPU, their share of the model and of its KV cache is held against the GPU's
// free memory, the rest against the machine's.
TEST(MemoryFit, LayersOnAGpuAreHeldAgainstItsFreeMemory) {
  const auto s = plan(R"({"prompt_tokens": [256], "num_ctx": [1048576]})");
  GpuBudget gpu{1, 768ULL << 20, "GPU 0 (fixture)"};  // 1 of 2 layers on a GPU with 0.75 GiB free
  const auto fit = memory_fit(s, shape(), 512ULL << 20, 4ULL << 30, gpu);
  ASSERT_EQ(fit.conditions.size(), 1U);
  EXPECT_EQ(fit.conditions[0].gpu_bytes, (768ULL << 20)) << "half of 0.5 GiB + 1 GiB";
  EXPECT_EQ(fit.conditions[0].host(), (768ULL << 20));
  EXPECT_NO_THROW(check_memory_fit(fit, "m.json", false)) << "0.75 GiB fits in 0.75 GiB";
  gpu.layers = 2;
  try {
    check_memory_fit(memory_fit(s, shape(), 512ULL << 20, 4ULL << 30, gpu), "m.json", false);
    ADD_FAILURE() << "1.5 GiB on a GPU with 0.75 GiB free";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("m.json: num_ctx 1048576 with a f16 KV cache puts 1.5 GiB on "
                                    "the GPU (2 of the model's 2 layers"));
    EXPECT_THAT(e.what(), HasSubstr("more than the 0.8 GiB free on GPU 0 (fixture) (nvidia-smi)"));
  }
  // No GPU listed: the whole model is the machine's, and the report says none was checked.
  const auto none = memory_fit(s, shape(), 512ULL << 20, 4ULL << 30, GpuBudget{99, {}, ""});
  EXPECT_EQ(none.conditions[0].gpu_bytes, 0U);
  EXPECT_THAT(none.warnings, ::testing::Contains(HasSubstr("nvidia-smi lists no GPU")));
}

// The GPUs' free memory is what nvidia-smi says (here a fixture nvidia-smi on the PATH).
TEST(MemoryFit, TheGpusFreeMemoryIsReadFromNvidiaSmi) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kvbench-smi-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream smi(dir / "nvidia-smi");
    smi << "#!/bin/sh\n# fixture: the one query gpu_devices() makes\n"
           "echo '0, 81559, 80535, 550.54.15, NVIDIA H100 80GB HBM3'\n"
           "echo '1, 81559, 81047, 550.54.15, NVIDIA H100 80GB HBM3'\n";
  }
  std::filesystem::permissions(dir / "nvidia-smi", std::filesystem::perms::owner_all);
  const std::string old_path = std::getenv("PATH") == nullptr ? "" : std::getenv("PATH");
  ::setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);
  const auto b = gpu_budget(20);
  const auto off = gpu_budget(0);
  ::setenv("PATH", old_path.c_str(), 1);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(b.layers, 20);
  ASSERT_TRUE(b.free.has_value());
  EXPECT_EQ(*b.free, (1024ULL + 512ULL) << 20);
  EXPECT_EQ(b.names, "GPU 0 (NVIDIA H100 80GB HBM3), GPU 1 (NVIDIA H100 80GB HBM3)");
  EXPECT_FALSE(off.free.has_value()) << "no layers on a GPU: nvidia-smi is not asked";
}

}  // namespace
}  // namespace kvbench::servers
