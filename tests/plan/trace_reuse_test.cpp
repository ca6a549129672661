#include <algorithm>

#include <gtest/gtest.h>

#include "harness/workloads/trace/reuse.h"

namespace kvbench::workloads::trace {
namespace {

const std::string kTraces = std::string(KVBENCH_TEST_DATA) + "/traces/";

std::vector<int> blocks_of(const std::vector<Reuse>& reuse) {
  std::vector<int> out;
  for (const auto& r : reuse) {
    out.push_back(r.blocks);
  }
  return out;
}

std::vector<long long> tokens_of(const std::vector<Reuse>& reuse) {
  std::vector<long long> out;
  for (const auto& r : reuse) {
    out.push_back(r.tokens);
  }
  return out;
}

// Five requests of 10-token blocks, the last block partial where the input is not a multiple:
//   A [1 2 3] 30 tokens, B [1 2 4] 25, C [5 6] 20, D [1 2 3] 30, E [5 6 7] 28
// 14 blocks and 133 tokens in all.
Trace hand_trace() {
  Trace t;
  t.block_tokens = 10;
  const auto add = [&](int input, std::vector<std::uint64_t> blocks) {
    Request r;
    r.due_ms = static_cast<double>(t.requests.size());
    r.input_tokens = input;
    r.output_tokens = 1;
    r.blocks = std::move(blocks);
    t.requests.push_back(r);
  };
  add(30, {1, 2, 3});  // A
  add(25, {1, 2, 4});  // B
  add(20, {5, 6});     // C
  add(30, {1, 2, 3});  // D
  add(28, {5, 6, 7});  // E
  return t;
}

TEST(TraceReuse, InfiniteCacheReusesTheLongestPrefixSentBefore) {
  // A nothing; B 1 2 (then 4 is new); C nothing; D all of A's blocks, so its whole 30 tokens;
  // E 5 6 (7 is new).
  const auto reuse = infinite_reuse(hand_trace());
  EXPECT_EQ(blocks_of(reuse), (std::vector<int>{0, 2, 0, 3, 2}));
  EXPECT_EQ(tokens_of(reuse), (std::vector<long long>{0, 20, 0, 30, 20}));
  const HitRates rates = hit_rates(hand_trace(), reuse);
  EXPECT_EQ(rates.blocks.name, "blocks");
  EXPECT_DOUBLE_EQ(rates.blocks.rate, 7.0 / 14.0);
  EXPECT_EQ(rates.tokens.name, "tokens");
  EXPECT_DOUBLE_EQ(rates.tokens.rate, 70.0 / 133.0);
  // (0 + 2/3 + 0 + 1 + 2/3) / 5
  EXPECT_EQ(rates.per_request_mean.name, "per_request_mean");
  EXPECT_DOUBLE_EQ(rates.per_request_mean.rate, 7.0 / 15.0);
}

TEST(TraceReuse, LruOfFourBlocksWorkedByHand) {
  // Cache listed most recently used first; a request's blocks are touched last block first, so
  // its first block ends up the most recent.
  //   A: hits 0.            touch 3 2 1 -> [1 2 3]
  //   B: 1 2 hit, 4 misses: 2.   touch 4 2 1 -> [1 2 4 3]
  //   C: 5 misses: 0.       touch 6 5 -> [5 6 1 2 4 3], evict 3 4 -> [5 6 1 2]
  //   D: 1 2 hit, 3 misses: 2.   touch 3 2 1 -> [1 2 3 5 6], evict 6 -> [1 2 3 5]
  //   E: 5 hits, 6 misses: 1.    touch 7 6 5 -> [5 6 7 1 2 3], evict 3 2 -> [5 6 7 1]
  const auto reuse = lru_reuse(hand_trace(), 4);
  EXPECT_EQ(blocks_of(reuse), (std::vector<int>{0, 2, 0, 2, 1}));
  EXPECT_EQ(tokens_of(reuse), (std::vector<long long>{0, 20, 0, 20, 10}));
  const HitRates rates = hit_rates(hand_trace(), reuse);
  EXPECT_DOUBLE_EQ(rates.blocks.rate, 5.0 / 14.0);
  EXPECT_DOUBLE_EQ(rates.tokens.rate, 50.0 / 133.0);
  EXPECT_DOUBLE_EQ(rates.per_request_mean.rate, (2.0 / 3 + 2.0 / 3 + 1.0 / 3) / 5);  // 1/3
}

TEST(TraceReuse, LruOfTwoBlocksKeepsOnlyTheLastPrefix) {
  //   A: 0, holds [1 2]. B: 1 2 hit: 2, holds [1 2]. C: 0, holds [5 6].
  //   D: 1 misses: 0, holds [1 2]. E: 5 misses: 0, holds [5 6].
  // Touching first block first instead would leave A's tail [3 2] and B would hit nothing.
  const auto reuse = lru_reuse(hand_trace(), 2);
  EXPECT_EQ(blocks_of(reuse), (std::vector<int>{0, 2, 0, 0, 0}));
  const HitRates rates = hit_rates(hand_trace(), reuse);
  EXPECT_DOUBLE_EQ(rates.blocks.rate, 2.0 / 14.0);
  EXPECT_DOUBLE_EQ(rates.tokens.rate, 20.0 / 133.0);
  EXPECT_DOUBLE_EQ(rates.per_request_mean.rate, 2.0 / 15.0);
}

TEST(TraceReuse, LruBoundsAreNoCacheAndTheInfiniteCache) {
  EXPECT_EQ(blocks_of(lru_reuse(hand_trace(), 0)), (std::vector<int>{0, 0, 0, 0, 0}));
  EXPECT_EQ(blocks_of(lru_reuse(hand_trace(), 7)), blocks_of(infinite_reuse(hand_trace())));
}

TEST(TraceReuse, HitRatesOfNothingAreZero) {
  const HitRates rates = hit_rates(Trace{}, {});
  EXPECT_EQ(rates.blocks.rate, 0.0);
  EXPECT_EQ(rates.tokens.rate, 0.0);
  EXPECT_EQ(rates.per_request_mean.rate, 0.0);
}

TEST(TraceReuse, MooncakeConversationTraceHitRatesByDefinition) {
  const Trace t = read_trace_file(kTraces + "mooncake-conversation.jsonl.xz", Format::mooncake);
  const HitRates rates = hit_rates(t, infinite_reuse(t));
  EXPECT_NEAR(rates.blocks.rate, 0.366, 0.0005);            // measured 0.36641
  EXPECT_NEAR(rates.tokens.rate, 0.374, 0.0005);            // measured 0.37362
  EXPECT_NEAR(rates.per_request_mean.rate, 0.384, 0.0005);  // measured 0.38426
}

TEST(TraceReuse, MooncakeConversationFamiliesArriveFarApart) {
  // A request's predecessor with the same first two blocks: a median 421 requests back.
  const Trace t = read_trace_file(kTraces + "mooncake-conversation.jsonl.xz", Format::mooncake);
  auto distances = family_predecessor_distances(t);
  ASSERT_EQ(distances.size(), 4658U);
  std::sort(distances.begin(), distances.end());
  const std::size_t mid = distances.size() / 2;  // even count: the middle pair
  EXPECT_EQ(distances[mid - 1] + distances[mid], 2U * 421U);
}

TEST(TraceReuse, FamilyDistancesCountFromTheLatestRelative) {
  Trace t = hand_trace();
  // Families: {1 2}: A B D; {5 6}: C E. B is 1 back from A, D 2 back from B, E 2 back from C.
  EXPECT_EQ(family_predecessor_distances(t), (std::vector<std::size_t>{1, 2, 2}));
}

}  // namespace
}  // namespace kvbench::workloads::trace
