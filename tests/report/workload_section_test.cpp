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

// The section of `run`, its scenario read back as the report reads it.
WorkloadSection section_of(const results::RunManifest& run, const std::vector<CallRecord>& calls) {
  return workload_section(scenario::recorded_scenario(run.scenario), run, calls);
}

// The key of the section of a run whose resolved scenario is `scenario`, without calls.
std::string key_of(const json& scenario) {
  results::RunManifest run;
  run.scenario = scenario;
  return section_of(run, {}).key;
}

TEST(WorkloadSection, TheWorkloadIsFoundByTheNameTheScenarioRecords) {
  EXPECT_EQ(key_of(json{{"name", "s"}}), "sweep");
  EXPECT_EQ(key_of(json()), "sweep");
  EXPECT_EQ(key_of(json{{"conversation", {{"turns", 3}}}}), "conversation");
  EXPECT_EQ(key_of(json{{"workload", {{"conversation", json::object()}}}}), "conversation");
  EXPECT_EQ(key_of(json{{"workload", {{"trace", json::object()}}}}), "trace");
  EXPECT_EQ(key_of(json{{"workload", {{"sweep", json::object()}}}}), "sweep");
}

TEST(WorkloadSection, EachRecordedRunGetsItsWorkloadsSection) {
  const fs::path runs = fs::path(KVBENCH_TEST_DATA) / "runs";
  const auto conv = results::load_run(runs / "conversation-tiny");
  const WorkloadSection c = section_of(conv.run, conv.calls);
  EXPECT_EQ(c.key, "conversation");
  EXPECT_TRUE(c.present);
  EXPECT_NE(c.markdown.find("## Conversations"), std::string::npos);
  EXPECT_TRUE(c.json.is_object());
  ASSERT_EQ(c.plots.size(), 1U);  // its turns, drawn on the page
  EXPECT_EQ(c.plots[0].id, "turns");
  EXPECT_FALSE(c.plots[0].series.empty());
  ASSERT_EQ(c.proof.size(), 1U);
  EXPECT_NE(c.proof[0].find("conversation turns reused their history exactly as predicted"),
            std::string::npos);
  EXPECT_TRUE(c.keeps_its_server);
  const auto sweep = results::load_run(runs / "quickstart");
  const WorkloadSection s = section_of(sweep.run, sweep.calls);
  EXPECT_EQ(s.key, "sweep");
  EXPECT_FALSE(s.present);
  EXPECT_TRUE(s.markdown.empty());
  EXPECT_TRUE(s.plots.empty());
  EXPECT_TRUE(s.proof.empty());
  EXPECT_FALSE(s.keeps_its_server);
  const auto trace = results::load_run(runs / "trace-tiny");
  const WorkloadSection t = section_of(trace.run, trace.calls);
  EXPECT_EQ(t.key, "trace");
  EXPECT_TRUE(t.present);
  ASSERT_EQ(t.plots.size(), 1U);
  EXPECT_EQ(t.plots[0].id, "trace");
  EXPECT_TRUE(t.keeps_its_server);
}

}  // namespace
}  // namespace kvbench::report
