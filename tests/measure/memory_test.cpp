#include "harness/measure/memory.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace kvbench::measure {
namespace {

constexpr const char* kStatus =
    "Name:\tllama-server\n"
    "Umask:\t0022\n"
    "State:\tS (sleeping)\n"
    "Pid:\t4242\n"
    "PPid:\t1\n"
    "VmPeak:\t  912340 kB\n"
    "VmSize:\t  912336 kB\n"
    "VmLck:\t       0 kB\n"
    "VmHWM:\t  153600 kB\n"
    "VmRSS:\t  150016 kB\n"
    "RssAnon:\t   98304 kB\n"
    "RssFile:\t   51200 kB\n"
    "RssShmem:\t     512 kB\n"
    "VmData:\t  200000 kB\n"
    "VmSwap:\t      16 kB\n"
    "Threads:\t3\n"
    "voluntary_ctxt_switches:\t120\n";

TEST(ParseProcStatus, ReadsEveryFieldInBytes) {
  const auto memory = parse_proc_status(kStatus);
  ASSERT_TRUE(memory.has_value());
  EXPECT_EQ(memory->rss_bytes, 150016ULL * 1024);
  EXPECT_EQ(memory->peak_rss_bytes, 153600ULL * 1024);
  EXPECT_EQ(memory->virtual_bytes, 912336ULL * 1024);
  EXPECT_EQ(memory->swap_bytes, 16ULL * 1024);
  EXPECT_EQ(memory->rss_anon_bytes, 98304ULL * 1024);
  EXPECT_EQ(memory->rss_file_bytes, 51200ULL * 1024);
  EXPECT_EQ(memory->rss_shmem_bytes, 512ULL * 1024);
}

TEST(ParseProcStatus, OldKernelWithoutSplitAndLastLineWithoutNewline) {
  const auto memory = parse_proc_status("VmSize:\t 100 kB\nVmHWM:\t 20 kB\nVmRSS:\t 10 kB");
  ASSERT_TRUE(memory.has_value());
  ProcessMemory expected;
  expected.rss_bytes = 10ULL * 1024;
  expected.peak_rss_bytes = 20ULL * 1024;
  expected.virtual_bytes = 100ULL * 1024;
  EXPECT_EQ(*memory, expected);
}

TEST(ParseProcStatus, ZombieWithoutVmLinesIsNothing) {
  EXPECT_EQ(parse_proc_status("Name:\tllama-server\nState:\tZ (zombie)\nThreads:\t1\n"),
            std::nullopt);
  EXPECT_EQ(parse_proc_status(""), std::nullopt);
}

TEST(ParseProcStatus, MalformedValuesAreSkipped) {
  const auto memory = parse_proc_status("VmRSS:\t 8 kB\nVmSwap:\t lots kB\nVmHWM:\t 9 MB\n");
  ASSERT_TRUE(memory.has_value());
  EXPECT_EQ(memory->rss_bytes, 8U * 1024);
  EXPECT_EQ(memory->swap_bytes, 0U);
  EXPECT_EQ(memory->peak_rss_bytes, 0U);
}

TEST(ReadProcessMemory, OwnProcessUsesMemory) {
  const auto memory = read_process_memory(getpid());
  ASSERT_TRUE(memory.has_value());
  EXPECT_GT(memory->rss_bytes, 0U);
  EXPECT_GE(memory->peak_rss_bytes, memory->rss_bytes);
  EXPECT_GE(memory->virtual_bytes, memory->rss_bytes);
}

TEST(ReadProcessMemory, MissingProcessIsNothing) {
  EXPECT_EQ(read_process_memory(0x7ffffff0), std::nullopt);  // above any pid_max
}

TEST(ProcessMemoryJson, WritesPresentFieldsOnly) {
  ProcessMemory memory;
  memory.rss_bytes = 1;
  memory.peak_rss_bytes = 2;
  memory.virtual_bytes = 3;
  memory.swap_bytes = 4;
  memory.rss_anon_bytes = 5;
  const nlohmann::json json = memory;
  EXPECT_EQ(json, nlohmann::json::parse(R"({"rss_bytes": 1, "peak_rss_bytes": 2,
      "virtual_bytes": 3, "swap_bytes": 4, "rss_anon_bytes": 5})"));
}

}  // namespace
}  // namespace kvbench::measure
