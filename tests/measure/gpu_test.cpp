#include "harness/measure/gpu.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "harness/process/child.h"

namespace kvbench::measure {
namespace {

constexpr std::uint64_t kMiB = 1024ULL * 1024;

TEST(ParseComputeApps, PidsAndMemoryInBytes) {
  const auto apps = parse_compute_apps("12345, 1024\n678, [N/A]\n\n  910 ,  3 \r\nnot a line\n");
  EXPECT_EQ(apps, (std::vector<GpuProcessMemory>{
                      {12345, 1024 * kMiB}, {678, std::nullopt}, {910, 3 * kMiB}}));
  EXPECT_TRUE(parse_compute_apps("").empty());
  EXPECT_TRUE(parse_compute_apps("No running processes found\n").empty());
}

TEST(ParseGpuQuery, NameMayContainCommas) {
  const auto devices = parse_gpu_query(
      "0, 143771, 0, 550.54.15, NVIDIA H200\n1, [N/A], 12, 550.54.15, Vendor GPU, Rev 2\n");
  EXPECT_EQ(devices, (std::vector<GpuDevice>{
                         {0, 143771 * kMiB, 0, "550.54.15", "NVIDIA H200"},
                         {1, std::nullopt, 12 * kMiB, "550.54.15", "Vendor GPU, Rev 2"}}));
  EXPECT_TRUE(parse_gpu_query("0, 1, 2, 3\n").empty());  // too few fields
}

TEST(GpuDeviceJson, UnknownMemoryIsNull) {
  const nlohmann::json json = GpuDevice{1, std::nullopt, 12 * kMiB, "550", "GPU"};
  EXPECT_EQ(json, nlohmann::json::parse(R"({"index": 1, "name": "GPU", "driver_version": "550",
      "memory_total_bytes": null, "memory_used_bytes": 12582912})"));
}

TEST(GpuMemoryOf, NothingWithoutNvidiaSmiAndZeroForAProcessWithoutGpuWork) {
  const auto used = gpu_memory_of(getpid());
  if (!process::find_on_path("nvidia-smi")) {
    EXPECT_EQ(used, std::nullopt);
    EXPECT_TRUE(gpu_devices().empty());
  } else {
    EXPECT_EQ(used, std::optional<std::uint64_t>(0));  // this test never touches a GPU
  }
}

}  // namespace
}  // namespace kvbench::measure
