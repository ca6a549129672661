// Prefix-reuse pairs in the plan: shuffled with everything else, never split apart.

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness/plan/plan.h"

namespace kvbench::plan {
namespace {

scenario::Scenario make_pairs(std::uint64_t seed) {
  return scenario::parse_scenario(
      R"({"name": "p", "factors": {"prompt_tokens": [512, 1024],
          "edit_position": [0, 0.25, 0.5, 0.75, 1, "none", "question"],
          "num_ctx": [4096], "cache_type": ["f16", "q8_0"]},
          "repeats": 3, "warmup": 1, "block_repeats": 2, "seed": )" +
          std::to_string(seed) + "}",
      "p.json");
}

TEST(PairPlan, EveryColdReadIsFollowedAtOnceByItsEditedRead) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const Plan p = make_plan(make_pairs(seed));
    std::set<int> pair_ids;
    for (const auto& b : p.blocks) {
      ASSERT_EQ(b.calls.size(), 1U + 3 * 2 * 7 * 2) << "warm-up, then rounds of 14 pairs";
      EXPECT_EQ(b.calls[0].kind, CallKind::warmup);
      EXPECT_EQ(b.calls[0].role, PairRole::none);
      for (std::size_t i = 1; i < b.calls.size(); i += 2) {
        const auto& cold = b.calls[i];
        const auto& edited = b.calls[i + 1];
        ASSERT_EQ(cold.role, PairRole::cold) << "seed " << seed << " seq " << cold.seq;
        ASSERT_EQ(edited.role, PairRole::edited) << "seed " << seed << " seq " << edited.seq;
        EXPECT_EQ(cold.pair, cold.seq);
        EXPECT_EQ(edited.pair, cold.seq);
        EXPECT_EQ(edited.seq, cold.seq + 1);
        EXPECT_EQ(edited.prompt_tokens, cold.prompt_tokens);
        EXPECT_EQ(edited.edit, cold.edit);
        EXPECT_EQ(edited.round, cold.round);
        EXPECT_TRUE(pair_ids.insert(cold.pair).second) << "pair ids are unique in the run";
      }
    }
  }
}

TEST(PairPlan, EachRoundHoldsEveryLengthAndPositionOnceInShuffledOrder) {
  std::set<std::vector<std::string>> orders;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Plan p = make_plan(make_pairs(seed));
    for (const auto& b : p.blocks) {
      std::map<int, std::vector<std::string>> rounds;
      for (const auto& c : b.calls) {
        if (c.role == PairRole::cold) {
          rounds[c.round].push_back(std::to_string(c.prompt_tokens) + "@" + c.edit->label());
        }
      }
      ASSERT_EQ(rounds.size(), 3U);
      for (const auto& [r, units] : rounds) {
        EXPECT_EQ(std::set<std::string>(units.begin(), units.end()).size(), 14U) << r;
        EXPECT_EQ(units.size(), 14U) << r;
        orders.insert(units);
      }
    }
  }
  EXPECT_GT(orders.size(), 100U) << "the pairs are shuffled, not listed in factor order";
}

TEST(PairPlan, ScenarioWithoutEditPositionHasNoPairs) {
  const auto s = scenario::parse_scenario(
      R"({"name": "p", "factors": {"prompt_tokens": [256, 512]}, "repeats": 2})", "p.json");
  const Plan p = make_plan(s);
  for (const auto& c : p.blocks[0].calls) {
    EXPECT_EQ(c.role, PairRole::none);
    EXPECT_EQ(c.pair, -1);
    EXPECT_FALSE(c.edit);
  }
  EXPECT_FALSE(to_json(p)["blocks"][0]["calls"][1].contains("pair"));
}

TEST(PairPlan, PlanJsonNamesPairsRolesAndPositions) {
  const auto j = to_json(make_plan(make_pairs(3)));
  const auto& cold = j["blocks"][0]["calls"][1];
  const auto& edited = j["blocks"][0]["calls"][2];
  EXPECT_EQ(cold["role"], "cold");
  EXPECT_EQ(edited["role"], "edited");
  EXPECT_EQ(cold["pair"], cold["seq"]);
  EXPECT_EQ(edited["pair"], cold["seq"]);
  EXPECT_EQ(cold["edit_position"], edited["edit_position"]);
}

}  // namespace
}  // namespace kvbench::plan
