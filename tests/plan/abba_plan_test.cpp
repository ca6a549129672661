#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness/plan/plan.h"

namespace kvbench::plan {
namespace {

scenario::Scenario with_variants(int sets, const std::string& variants,
                                 const std::string& num_ctx = "[1024]", std::uint64_t seed = 42) {
  return scenario::parse_scenario(
      R"({"name": "ab", "factors": {"prompt_tokens": [64, 128, 256], "num_ctx": )" + num_ctx +
          R"(}, "repeats": 2, "warmup": 1, "probes": {"every": 2, "prompt_tokens": 64},
          "block_repeats": )" +
          std::to_string(sets) + R"(, "seed": )" + std::to_string(seed) + R"(, "variants": )" +
          variants + "}",
      "ab.json");
}

const std::string kAB = R"([{"name": "A"}, {"name": "B", "server": {"threads": 1}}])";
const std::string kABC = R"([{"name": "A"}, {"name": "B"}, {"name": "C"}])";

std::string order_of(const Plan& p) {
  std::string out;
  for (const auto& b : p.blocks) {
    out += b.config.variant;
  }
  return out;
}

TEST(AbbaPlan, TwoVariantsRunForwardThenReversedInEverySet) {
  const auto p = make_plan(with_variants(3, kAB));
  EXPECT_EQ(order_of(p), "ABBAABBAABBA");
  for (std::size_t i = 0; i < p.blocks.size(); ++i) {
    EXPECT_EQ(p.blocks[i].index, static_cast<int>(i));
    EXPECT_EQ(p.blocks[i].replica, static_cast<int>(i / 2));
  }
  EXPECT_EQ(p.blocks[1].config.label(), "B ctx=1024 kv=f16");
  EXPECT_EQ(to_json(p)["blocks"][1]["variant"], "B");
}

TEST(AbbaPlan, ThreeVariantsRunABCCBA) {
  EXPECT_EQ(order_of(make_plan(with_variants(2, kABC))), "ABCCBAABCCBA");
}

TEST(AbbaPlan, EveryConfigurationRunsABBAInEverySet) {
  const auto p = make_plan(with_variants(2, kAB, "[1024, 2048]"));
  ASSERT_EQ(p.blocks.size(), 16U);
  std::map<std::pair<int, int>, std::string> per_set_ctx;  // (set, num_ctx) -> variant order
  for (const auto& b : p.blocks) {
    per_set_ctx[{b.index / 8, b.config.num_ctx}] += b.config.variant;
  }
  ASSERT_EQ(per_set_ctx.size(), 4U);
  for (const auto& [key, order] : per_set_ctx) {
    EXPECT_EQ(order, "ABBA") << "set " << key.first << " ctx " << key.second;
  }
}

TEST(AbbaPlan, BlocksHoldTheUsualRoundsWarmupAndProbes) {
  const auto p = make_plan(with_variants(1, kAB));
  for (const auto& b : p.blocks) {
    // warm-up, probe, 2 rounds of 3 with a probe after every 2 timed calls: 3 probes, end probe.
    ASSERT_EQ(b.calls.size(), 1U + 1U + 6U + 3U);
    EXPECT_EQ(b.calls[0].kind, CallKind::warmup);
    EXPECT_EQ(b.calls[1].kind, CallKind::probe);
    std::map<int, std::vector<int>> rounds;
    for (const auto& c : b.calls) {
      if (c.kind == CallKind::timed) {
        rounds[c.round].push_back(c.prompt_tokens);
      }
    }
    for (auto& [r, lengths] : rounds) {
      std::sort(lengths.begin(), lengths.end());
      EXPECT_EQ(lengths, (std::vector<int>{64, 128, 256}));
    }
  }
  int seq = 0;
  for (const auto& b : p.blocks) {
    for (const auto& c : b.calls) {
      EXPECT_EQ(c.seq, seq++);
      EXPECT_EQ(c.block, b.index);
    }
  }
}

TEST(AbbaPlan, SameSeedSamePlanOtherSeedOtherCalls) {
  EXPECT_EQ(to_json(make_plan(with_variants(2, kAB))), to_json(make_plan(with_variants(2, kAB))));
  EXPECT_NE(to_json(make_plan(with_variants(2, kAB, "[1024]", 42))),
            to_json(make_plan(with_variants(2, kAB, "[1024]", 43))));
}

TEST(AbbaPlan, MoreSetsAppendBlocksAndLeaveEarlierOnesByteIdentical) {
  for (const std::string& ctx : {std::string("[1024]"), std::string("[1024, 2048]")}) {
    const auto short_plan = to_json(make_plan(with_variants(1, kAB, ctx)));
    const auto long_plan = to_json(make_plan(with_variants(3, kAB, ctx)));
    const auto& a = short_plan["blocks"];
    const auto& b = long_plan["blocks"];
    ASSERT_EQ(b.size(), 3 * a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].dump(), b[i].dump()) << "block " << i;
    }
  }
}

TEST(AbbaPlan, SetsShuffleCallsDifferently) {
  const auto p = make_plan(with_variants(4, kAB));
  std::set<std::vector<int>> orders;
  for (const auto& b : p.blocks) {
    std::vector<int> lengths;
    for (const auto& c : b.calls) {
      lengths.push_back(c.prompt_tokens);
    }
    orders.insert(lengths);
  }
  EXPECT_GT(orders.size(), 1U);
}

TEST(AbbaPlan, WithoutVariantsBlocksCarryNoVariant) {
  const auto s = scenario::parse_scenario(
      R"({"name": "x", "factors": {"prompt_tokens": [64]}, "block_repeats": 2})", "x.json");
  const auto p = make_plan(s);
  EXPECT_EQ(p.blocks[0].config.label(), "ctx=4096 kv=f16");
  EXPECT_FALSE(to_json(p)["blocks"][0].contains("variant"));
}

}  // namespace
}  // namespace kvbench::plan
