#include "harness/measure/proc_tree.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "harness/measure/memory.h"
#include "harness/process/child.h"

namespace kvbench::measure {
namespace {

TEST(ParseProcStat, CommandWithSpacesAndParentheses) {
  const auto stat = parse_proc_stat("4242 (llama (x) server) S 17 4242 4242 0 -1 4194560 95 0");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(*stat, (ProcStat{4242, 'S', 17, 4242}));
}

TEST(ParseProcStat, MalformedLinesAreNothing) {
  EXPECT_EQ(parse_proc_stat(""), std::nullopt);
  EXPECT_EQ(parse_proc_stat("4242 llama S 1 1"), std::nullopt);
  EXPECT_EQ(parse_proc_stat("x (llama) S 1 1"), std::nullopt);
  EXPECT_EQ(parse_proc_stat("4242 (llama) S one 1"), std::nullopt);
  EXPECT_EQ(parse_proc_stat("4242 (llama)"), std::nullopt);
}

TEST(DescendantsOf, BreadthFirstExcludingRoot) {
  const std::vector<ProcStat> table{{1, 'S', 0, 1},    {10, 'S', 1, 10},  {11, 'S', 10, 10},
                                    {12, 'S', 10, 10}, {13, 'S', 11, 10}, {20, 'S', 1, 20}};
  EXPECT_EQ(descendants_of(10, table), (std::vector<pid_t>{11, 12, 13}));
  EXPECT_EQ(descendants_of(13, table), std::vector<pid_t>{});
  EXPECT_EQ(descendants_of(99, table), std::vector<pid_t>{});
}

TEST(DescendantsOf, CyclesEndTheWalk) {
  const std::vector<ProcStat> table{{5, 'S', 6, 5}, {6, 'S', 5, 5}};
  EXPECT_EQ(descendants_of(5, table), std::vector<pid_t>{6});
}

TEST(ReadProcessTable, ContainsThisProcessAndItsParent) {
  const auto table = read_process_table();
  const auto self =
      std::find_if(table.begin(), table.end(), [](const ProcStat& s) { return s.pid == getpid(); });
  ASSERT_NE(self, table.end());
  EXPECT_EQ(self->ppid, getppid());
  EXPECT_EQ(self->pgrp, getpgrp());
}

TEST(ReadTreeMemory, SumsALauncherAndTheProcessItStarted) {
  process::SpawnSpec spec;
  spec.argv = {"bash", "-c", "sleep 30 & wait"};
  process::ChildProcess launcher = process::ChildProcess::spawn(spec);
  std::optional<TreeMemory> tree;
  for (int i = 0; i < 1000 && (!tree || tree->pids.size() < 2); ++i) {  // at most ~10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    tree = read_tree_memory(launcher.pid());
  }
  ASSERT_TRUE(tree.has_value());
  ASSERT_EQ(tree->pids.size(), 2U);
  EXPECT_EQ(tree->pids.front(), launcher.pid());
  const auto root = read_process_memory(launcher.pid());
  ASSERT_TRUE(root.has_value());
  EXPECT_GT(tree->rss_bytes, 0U);
  EXPECT_GT(tree->virtual_bytes, root->virtual_bytes);  // the sleep adds its own mappings
  const nlohmann::json json = *tree;
  EXPECT_EQ(json["process_count"], 2);
  launcher.stop(std::chrono::milliseconds(5000));
  EXPECT_EQ(read_tree_memory(launcher.pid()), std::nullopt);
}

}  // namespace
}  // namespace kvbench::measure
