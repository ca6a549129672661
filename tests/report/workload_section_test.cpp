// The report reaches a run's workload through the table of workloads: by the name its resolved
// scenario records, the sweep when none; each workload's folder makes its section.

#include "harness/report/workload_section.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "harness/results/results.h"

namespace kvbench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(WorkloadSection, TheWorkloadIsFoundByTheNameTheScenarioRecords) {
  EXPECT_TRUE(std::holds_alternative<workloads::Sweep>(workload_of(json{{"name", "s"}})));
  EXPECT_TRUE(std::holds_alternative<workloads::Sweep>(workload_of(json())));
  EXPECT_TRUE(std::holds_alternative<workloads::Conversation>(
      workload_of(json{{"conversation", {{"turns", 3}}}})));
  EXPECT_TRUE(std::holds_alternative<workloads::Conversation>(
      workload_of(json{{"workload", {{"conversation", json::object()}}}})));
  EXPECT_TRUE(std::holds_alternative<workloads::Sweep>(
      workload_of(json{{"workload", {{"sweep", json::object()}}}})));
}

TEST(WorkloadSection, EachRecordedRunGetsItsWorkloadsSection) {
  const fs::path runs = fs::path(KVBENCH_TEST_DATA) / "runs";
  const auto conv = results::load_run(runs / "conversation-tiny");
  const WorkloadSection c = workload_section(conv.run, conv.calls);
  EXPECT_EQ(c.key, "conversation");
  EXPECT_TRUE(c.present);
  EXPECT_NE(c.markdown.find("## Conversations"), std::string::npos);
  EXPECT_TRUE(c.json.is_object());
  const auto sweep = results::load_run(runs / "quickstart");
  const WorkloadSection s = workload_section(sweep.run, sweep.calls);
  EXPECT_EQ(s.key, "sweep");
  EXPECT_FALSE(s.present);
  EXPECT_TRUE(s.markdown.empty());
}

}  // namespace
}  // namespace kvbench::report
