#include "harness/load/capacity_search.h"

#include <map>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace kvbench::load {
namespace {

// A measurement from a table of p90 values by level; a level missing from it fails the test.
struct Table {
  std::map<int, LevelMeasurement> by_level;
  std::vector<int> asked;
  LevelMeasurement operator()(int level) {
    asked.push_back(level);
    const auto it = by_level.find(level);
    EXPECT_NE(it, by_level.end()) << "level " << level << " was not expected to be probed";
    return it == by_level.end() ? LevelMeasurement{} : it->second;
  }
};

// p90 = 300 ms per conversation in flight: the limit 2000 ms holds up to level 6.
Table linear_table(int max_level) {
  Table t;
  for (int n = 1; n <= max_level; ++n) {
    t.by_level[n] = {300.0 * n, 0, {}};
  }
  return t;
}

std::vector<int> probed_levels(const CapacityResult& r) {
  std::vector<int> out;
  for (const auto& p : r.probes) {
    out.push_back(p.level);
  }
  return out;
}

TEST(CapacitySearch, DoublesThenBisectsOnAMonotoneCurve) {
  Table t = linear_table(16);
  const auto r = search_capacity(16, 2000, std::ref(t));
  EXPECT_EQ(r.answer, 6);
  EXPECT_FALSE(r.at_max);
  EXPECT_EQ(r.first_failed, 7);
  EXPECT_EQ(probed_levels(r), (std::vector<int>{1, 2, 4, 8, 6, 7}));
  EXPECT_EQ(t.asked, probed_levels(r));
  EXPECT_TRUE(r.probes[4].passed);
  EXPECT_FALSE(r.probes[5].passed);
}

TEST(CapacitySearch, ALimitExactlyReachedFails) {
  Table t = linear_table(16);
  const auto r = search_capacity(16, 1800, std::ref(t));  // level 6 gives exactly 1800 ms
  EXPECT_EQ(r.answer, 5);
  EXPECT_EQ(r.first_failed, 6);
}

TEST(CapacitySearch, LimitNeverMetAtOneAnswersZero) {
  Table t;
  t.by_level[1] = {2500, 0, {}};
  const auto r = search_capacity(16, 2000, std::ref(t));
  EXPECT_EQ(r.answer, 0);
  EXPECT_FALSE(r.at_max);
  EXPECT_EQ(r.first_failed, 1);
  EXPECT_EQ(probed_levels(r), (std::vector<int>{1}));
}

TEST(CapacitySearch, MaxReachedCapsTheLastDoublingStep) {
  Table t = linear_table(5);
  const auto r = search_capacity(5, 1e9, std::ref(t));
  EXPECT_EQ(r.answer, 5);
  EXPECT_TRUE(r.at_max);
  EXPECT_FALSE(r.first_failed.has_value());
  EXPECT_EQ(probed_levels(r), (std::vector<int>{1, 2, 4, 5}));
}

TEST(CapacitySearch, MaxOfOneProbesOnce) {
  Table t = linear_table(1);
  const auto r = search_capacity(1, 2000, std::ref(t));
  EXPECT_EQ(r.answer, 1);
  EXPECT_TRUE(r.at_max);
  EXPECT_EQ(probed_levels(r), (std::vector<int>{1}));
  EXPECT_THROW(search_capacity(0, 2000, std::ref(t)), std::invalid_argument);
}

TEST(CapacitySearch, NoisyCurveGivesTheBoundaryFoundEachLevelOnce) {
  // Level 4 fails by noise although 8 would pass: doubling stops at 4, bisection tries 3; the
  // answer is a level that passed with the next level up failed, and 8 is never probed.
  Table t;
  t.by_level = {{1, {100, 0, {}}}, {2, {200, 0, {}}}, {3, {2100, 0, {}}}, {4, {2500, 0, {}}}};
  const auto r = search_capacity(16, 2000, std::ref(t));
  EXPECT_EQ(r.answer, 2);
  EXPECT_EQ(r.first_failed, 3);
  EXPECT_EQ(probed_levels(r), (std::vector<int>{1, 2, 4, 3}));
}

TEST(CapacitySearch, NoisyDipInsideTheBisectionKeepsTheLowerPass) {
  // 5 fails, 6 passes, 7 fails: the bisection between 4 and 8 probes 6 then 7, answering 6;
  // 5 is never probed.
  Table t;
  t.by_level = {{1, {100, 0, {}}},  {2, {200, 0, {}}},  {4, {400, 0, {}}},
                {8, {2400, 0, {}}}, {6, {1900, 0, {}}}, {7, {2050, 0, {}}}};
  const auto r = search_capacity(16, 2000, std::ref(t));
  EXPECT_EQ(r.answer, 6);
  EXPECT_EQ(r.first_failed, 7);
  EXPECT_EQ(probed_levels(r), (std::vector<int>{1, 2, 4, 8, 6, 7}));
}

TEST(CapacitySearch, RefusedCallsOrNoTtftFailALevel) {
  Table t;
  t.by_level = {{1, {100, 0, {}}}, {2, {150, 1, {}}}};
  auto r = search_capacity(8, 2000, std::ref(t));
  EXPECT_EQ(r.answer, 1);
  EXPECT_EQ(describe_probe(r.probes[1], 2000), "failed: 1 call not ok");
  EXPECT_EQ(describe_probe(r.probes[0], 2000), "passed: p90 100.0 ms < 2000 ms");

  Table none;
  none.by_level = {{1, {std::nullopt, 0, {}}}};
  r = search_capacity(8, 2000, std::ref(none));
  EXPECT_EQ(r.answer, 0);
  EXPECT_EQ(describe_probe(r.probes[0], 2000), "failed: no TTFT measured");
}

}  // namespace
}  // namespace kvbench::load
