#include "harness/measure/machine_state.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kvbench::measure {
namespace {

TEST(MachineState, ProcStatGivesBusyIdleAndSteal) {
  const auto t =
      parse_cpu_times("cpu  100 5 30 800 20 2 3 40 0 0\ncpu0 50 2 15 400 10 1 1 20 0 0\nintr 1\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->busy, 100U + 5 + 30 + 2 + 3);
  EXPECT_EQ(t->idle, 820U);
  EXPECT_EQ(t->steal, 40U);
  // An old kernel without steal and irq columns.
  const auto old = parse_cpu_times("cpu  1 2 3 4\n");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->steal, 0U);
  EXPECT_FALSE(parse_cpu_times("intr 1 2 3\n"));
  EXPECT_FALSE(parse_cpu_times("cpu  x y\n"));
}

TEST(MachineState, GpuClocksSkipMalformedLines) {
  const auto g = parse_gpu_clocks("0, 1980, 54\n1, [N/A], 61\nnot a line\n");
  ASSERT_EQ(g.size(), 2U);
  EXPECT_EQ(g[0], (GpuClock{0, 1980.0, 54.0}));
  EXPECT_FALSE(g[1].sm_clock_mhz);
  EXPECT_EQ(g[1].temperature_c, 61.0);
}

TEST(MachineState, BlockStateGivesStealAndWarnings) {
  MachineState start;
  start.governor = "powersave";
  start.load_average = std::array<double, 3>{3.5, 1.0, 0.5};
  start.cpu_times = CpuTimes{1000, 1000, 0};
  MachineState end = start;
  end.cpu_times = CpuTimes{1600, 1300, 100};
  const nlohmann::json j = block_machine_state(start, end, 2);
  EXPECT_DOUBLE_EQ(j["steal_share"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["busy_share"].get<double>(), 0.6);
  ASSERT_EQ(j["warnings"].size(), 2U) << j.dump();
  EXPECT_NE(j["warnings"][0].get<std::string>().find("powersave"), std::string::npos);
  EXPECT_NE(j["warnings"][1].get<std::string>().find("3.50 on 2 usable cores"), std::string::npos);
  MachineState quiet;
  quiet.governor = "performance";
  quiet.load_average = std::array<double, 3>{0.2, 0.1, 0.1};
  EXPECT_TRUE(nlohmann::json(block_machine_state(quiet, quiet, 2))["warnings"].empty());
  EXPECT_FALSE(nlohmann::json(block_machine_state(quiet, quiet, 2)).contains("steal_share"));
}

TEST(MachineState, PowersaveWarnsOnlyWhereItLowersTheClock) {
  MachineState m;
  m.governor = "powersave";
  m.driver = "acpi-cpufreq";  // the classic powersave: the lowest frequency
  EXPECT_EQ(nlohmann::json(block_machine_state(m, m, 2))["warnings"].size(), 1U);
  for (const char* pstate : {"intel_pstate", "amd-pstate-epp", "amd-pstate"}) {
    m.driver = pstate;  // their default powersave still follows the load
    EXPECT_TRUE(nlohmann::json(block_machine_state(m, m, 2))["warnings"].empty()) << pstate;
  }
  EXPECT_EQ(nlohmann::json(m)["driver"], "amd-pstate");
}

TEST(MachineState, CpufreqClockIsTheMeanOverTheCpusThatReportOne) {
  const auto root =
      std::filesystem::temp_directory_path() / ("kvbench-cpufreq-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto put = [&](const std::string& cpu, const std::string& khz) {
    std::filesystem::create_directories(root / cpu / "cpufreq");
    std::ofstream(root / cpu / "cpufreq" / "scaling_cur_freq") << khz;
  };
  EXPECT_FALSE(mean_cpufreq_mhz(root, "scaling_cur_freq")) << "no folder: nothing";
  put("cpu0", "2400000\n");
  put("cpu1", "3600000\n");
  put("cpu2", "garbage\n");                            // unreadable: left out
  std::filesystem::create_directories(root / "cpu3");  // no cpufreq: left out
  put("cpufreq", "1000000\n");                         // not a cpuN folder
  EXPECT_DOUBLE_EQ(*mean_cpufreq_mhz(root, "scaling_cur_freq"), 3000.0);
  EXPECT_FALSE(mean_cpufreq_mhz(root, "cpuinfo_max_freq"));
  std::filesystem::remove_all(root);
}

TEST(MachineState, ReadingThisMachineNeverThrows) {
  const auto s = read_machine_state();
  // /proc is there on Linux; cpufreq and nvidia-smi may not be.
  EXPECT_TRUE(s.cpu_times.has_value());
  EXPECT_TRUE(s.load_average.has_value());
  const nlohmann::json j = s;
  EXPECT_TRUE(j.contains("governor"));
}

}  // namespace
}  // namespace kvbench::measure
