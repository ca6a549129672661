#include "harness/measure/machine.h"

#include <unistd.h>

#include <array>
#include <string>

#include <gtest/gtest.h>

namespace kvbench::measure {
namespace {

TEST(ParseCpuModel, FirstModelNameOnX86) {
  EXPECT_EQ(parse_cpu_model("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\n"
                            "model name\t: Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz\n"
                            "processor\t: 1\nmodel name\t: other\n"),
            "Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz");
}

TEST(ParseCpuModel, ArmBoardsAndNothing) {
  EXPECT_EQ(parse_cpu_model("processor\t: 0\nBogoMIPS\t: 108.00\nModel\t\t: Raspberry Pi 4\n"),
            "Raspberry Pi 4");
  EXPECT_EQ(parse_cpu_model("processor\t: 0\n"), "");
}

TEST(ParseMeminfo, ValuesInBytes) {
  const std::string meminfo =
      "MemTotal:       24634600 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n";
  EXPECT_EQ(parse_meminfo_bytes(meminfo, "MemTotal"), 24634600ULL * 1024);
  EXPECT_EQ(parse_meminfo_bytes(meminfo, "MemAvailable"), 20000000ULL * 1024);
  EXPECT_EQ(parse_meminfo_bytes(meminfo, "Mem"), std::nullopt);
  EXPECT_EQ(parse_meminfo_bytes("MemTotal: many kB\n", "MemTotal"), std::nullopt);
  EXPECT_EQ(parse_meminfo_bytes("MemTotal: 12 MB\n", "MemTotal"), std::nullopt);
}

TEST(ParseOsRelease, PrettyNameUnquoted) {
  EXPECT_EQ(parse_os_pretty_name("NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 "
                                 "(bookworm)\"\nVERSION_ID=\"12\"\n"),
            "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(parse_os_pretty_name("PRETTY_NAME='Alpine Linux v3.19'\n"), "Alpine Linux v3.19");
  EXPECT_EQ(parse_os_pretty_name("PRETTY_NAME=\"say \\\"hi\\\"\"\n"), "say \"hi\"");
  EXPECT_EQ(parse_os_pretty_name("NAME=Fedora\n"), "Fedora");
  EXPECT_EQ(parse_os_pretty_name(""), "");
}

TEST(ParseLoadavg, ThreeAverages) {
  const auto loads = parse_loadavg("0.39 0.23 0.10 2/100 7096\n");
  ASSERT_TRUE(loads.has_value());
  EXPECT_DOUBLE_EQ((*loads)[0], 0.39);
  EXPECT_DOUBLE_EQ((*loads)[1], 0.23);
  EXPECT_DOUBLE_EQ((*loads)[2], 0.10);
  EXPECT_EQ(parse_loadavg("0.39 high"), std::nullopt);
}

TEST(MachineInfo, DescribesThisMachine) {
  const MachineInfo info = machine_info();
  std::array<char, 256> hostname{};
  ASSERT_EQ(gethostname(hostname.data(), hostname.size() - 1), 0);
  EXPECT_EQ(info.hostname, hostname.data());
  EXPECT_EQ(info.logical_cores, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(info.usable_cores, 1);
  EXPECT_LE(info.usable_cores, info.logical_cores);
  EXPECT_GT(info.total_memory_bytes, 0U);
  EXPECT_FALSE(info.kernel_release.empty());
  EXPECT_TRUE(info.load_average.has_value());

  const nlohmann::json json = info;
  for (const char* key :
       {"hostname", "cpu_model", "logical_cores", "usable_cores", "total_memory_bytes",
        "available_memory_bytes", "os_name", "kernel_release", "kernel_version", "architecture",
        "load_average", "gpus"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["logical_cores"], info.logical_cores);
}

}  // namespace
}  // namespace kvbench::measure
