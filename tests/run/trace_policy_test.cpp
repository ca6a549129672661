// llama-server's slot choice and host prompt cache as the replay models them (policy.h), each
// rule against what llama-server 0.7.0 (build 11669) did when the rule was checked on it.

#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "harness/workloads/trace/policy.h"

namespace kvbench::workloads::trace {
namespace {

// `n` tokens counting up from `first`: prompts that share nothing unless their ranges overlap.
std::vector<int> run_of(int first, int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

std::vector<int> joined(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

CacheSettings settings(int slots, long long host_mib) {
  CacheSettings c;
  c.slots = slots;
  c.host_mib = host_mib;
  return c;
}

// Sends, generates `answer` tokens and ends, like one request at a time.
Prediction round_trip(SlotPolicy& p, const std::vector<int>& ids, int answer = 2) {
  const Prediction out = p.send(ids);
  p.generated(*out.slot, std::vector<int>(static_cast<std::size_t>(answer), -7));
  p.release(*out.slot);
  return out;
}

TEST(SlotPolicy, AWholePromptMatchReadsTheLastTokenAgain) {
  SlotPolicy p(settings(1, 0));
  const auto a = run_of(1000, 200);
  EXPECT_EQ(round_trip(p, a).tokens, 0);
  const Prediction again = round_trip(p, a);
  EXPECT_EQ(again.tokens, 199);  // the binary: cache_n 199, prompt_n 1
  EXPECT_EQ(again.from, "slot");
}

TEST(SlotPolicy, TheAnswerStaysInTheSlotLessItsLastToken) {
  SlotPolicy p(settings(1, 0));
  const auto a = run_of(1000, 200);
  const Prediction first = p.send(a);
  p.generated(*first.slot, {5, 6, 7, 8});  // 8 is never read into the cache
  p.release(*first.slot);
  EXPECT_EQ(round_trip(p, joined(a, {5, 6, 7, 99})).tokens, 203);
}

TEST(SlotPolicy, FreshSlotsAreTakenLowestFirstThenTheOneWhoseRequestEndedFirst) {
  SlotPolicy p(settings(3, 0));
  EXPECT_EQ(*round_trip(p, run_of(1000, 50)).slot, 0);
  EXPECT_EQ(*round_trip(p, run_of(2000, 50)).slot, 1);
  EXPECT_EQ(*round_trip(p, run_of(3000, 50)).slot, 2);
  EXPECT_EQ(*round_trip(p, run_of(4000, 50)).slot, 0);  // ended first, whatever it held
}

TEST(SlotPolicy, ASlotSharingMoreThanTheThresholdOfTheRequestWinsTiesToTheLowest) {
  SlotPolicy p(settings(2, 0));
  const auto shared = run_of(1000, 100);
  EXPECT_EQ(*p.send(joined(shared, run_of(5000, 100))).slot, 0);
  EXPECT_EQ(*p.send(joined(shared, run_of(6000, 100))).slot, 1);  // slot 0 is busy
  p.release(0);
  p.release(1);
  const Prediction tie = round_trip(p, joined(shared, run_of(7000, 100)));
  EXPECT_EQ(*tie.slot, 0);  // f_sim 0.5 each: the lowest id, though slot 0 is the older
  EXPECT_EQ(tie.tokens, 100);
  // 10 of 200 tokens in common (0.05) is not more than 0.10: the least recently used slot.
  const Prediction below = round_trip(p, joined(run_of(1000, 10), run_of(8000, 190)));
  EXPECT_EQ(*below.slot, 1);
  EXPECT_EQ(below.tokens, 10);  // the slot keeps its own prefix
}

TEST(SlotPolicy, APrefixThatAnotherSlotHoldsIsAPlacementGap) {
  SlotPolicy p(settings(2, 0));
  const auto a = run_of(1000, 100);
  EXPECT_EQ(*p.send(a).slot, 0);
  EXPECT_EQ(*p.send(run_of(2000, 100)).slot, 1);
  p.release(1);  // slot 1's request ends first
  p.release(0);
  // 5 of 100 tokens of a: not more than the threshold, so the slot whose request ended first.
  const Prediction lost = p.send(joined(run_of(1000, 5), run_of(9000, 95)));
  EXPECT_EQ(*lost.slot, 1);
  EXPECT_EQ(lost.tokens, 0);
  EXPECT_TRUE(lost.elsewhere);
}

TEST(SlotPolicy, TheHostCacheBringsAPromptBackIntoAnotherSlot) {
  // The binary, -np 2: A, B, C, then A again came back from the host cache into slot 1 with
  // cache_n 199 of 200.
  SlotPolicy p(settings(2, 8192));
  const auto a = run_of(1000, 200);
  round_trip(p, a);
  round_trip(p, run_of(2000, 200));
  round_trip(p, run_of(3000, 200));
  const Prediction back = round_trip(p, a);
  EXPECT_EQ(*back.slot, 1);
  EXPECT_EQ(back.tokens, 199);
  EXPECT_EQ(back.from, "host_cache");
}

TEST(SlotPolicy, ASlotThatKeepsHalfItsTokensDoesNotLookInTheHostCache) {
  // The binary: the slot held A's first 40 tokens and 10 more (f_keep 40/51 >= 0.5); the whole
  // of A was in the host cache, and cache_n was 40.
  SlotPolicy p(settings(1, 8192));
  const auto a = run_of(1000, 200);
  round_trip(p, a, 1);
  round_trip(p, joined(run_of(1000, 40), run_of(5000, 10)), 1);
  EXPECT_EQ(round_trip(p, a).tokens, 40);
}

TEST(SlotPolicy, WithoutAHostCacheAnEvictedPromptIsGone) {
  SlotPolicy p(settings(1, 0));
  const auto a = run_of(1000, 200);
  round_trip(p, a);
  round_trip(p, run_of(2000, 200));
  const Prediction gone = round_trip(p, a);
  EXPECT_EQ(gone.tokens, 0);
  EXPECT_EQ(gone.from, "");
}

TEST(SlotPolicy, TheHostCacheDropsItsOldestSavesBeyondItsSize) {
  // 1 MiB at 4 KiB a token keeps 256 tokens: two 100-token prompts, not three.
  CacheSettings c = settings(1, 1);
  c.state_bytes_per_token = 4096;
  SlotPolicy p(c);
  const auto a = run_of(1000, 99);
  round_trip(p, a);                 // held 100 tokens
  round_trip(p, run_of(2000, 99));  // a saved
  round_trip(p, run_of(3000, 99));  // the second saved: 200 tokens kept
  round_trip(p, run_of(4000, 99));  // the third saved: a, the oldest, goes
  EXPECT_EQ(round_trip(p, a).tokens, 0);
  CacheSettings roomy = c;
  roomy.host_mib = 8192;
  SlotPolicy q(roomy);
  round_trip(q, a);
  round_trip(q, run_of(2000, 99));
  round_trip(q, run_of(3000, 99));
  round_trip(q, run_of(4000, 99));
  EXPECT_EQ(round_trip(q, a).tokens, 98);
}

TEST(SlotPolicy, APromptLargerThanTheHostCacheIsNotSaved) {
  // 1 MiB at 8 KiB a token keeps 128 tokens: a 200-token prompt is never saved, a 100-token one is.
  CacheSettings c = settings(1, 1);
  c.state_bytes_per_token = 8192;
  SlotPolicy p(c);
  const auto big = run_of(1000, 199);
  const auto small = run_of(5000, 99);
  round_trip(p, big);
  round_trip(p, small);             // big is not saved: it is larger than the cache
  round_trip(p, run_of(9000, 20));  // small is saved
  EXPECT_EQ(round_trip(p, big).tokens, 0);
  const Prediction back = round_trip(p, small);
  EXPECT_EQ(back.tokens, 98);
  EXPECT_EQ(back.from, "host_cache");
}

TEST(SlotPolicy, AllSlotsBusyFreesTheLeastRecentlyTaken) {
  SlotPolicy p(settings(2, 0));
  const auto a = run_of(1000, 100);
  EXPECT_EQ(*p.send(a).slot, 0);
  EXPECT_EQ(*p.send(run_of(2000, 100)).slot, 1);
  const Prediction next = p.send(joined(a, run_of(3000, 10)));
  EXPECT_EQ(*next.slot, 0);
  EXPECT_EQ(next.tokens, 100);
}

TEST(BlockLruPolicy, WholeBlocksAreReusedLessTheLastWhereThatWouldBeTheWholePrompt) {
  BlockLruPolicy p(16, 0, 0);
  const auto a = run_of(1000, 64);
  EXPECT_EQ(p.send(a).tokens, 0);
  EXPECT_EQ(p.send(joined(a, run_of(5000, 10))).tokens, 64);
  const Prediction again = p.send(a);
  EXPECT_EQ(again.tokens, 48);  // all four blocks cached: the last is computed again
  EXPECT_EQ(again.from, "blocks");
  EXPECT_EQ(p.send(joined(run_of(1000, 40), run_of(7000, 40))).tokens, 32);  // 2 whole blocks
  BlockLruPolicy at_least(16, 64, 0);
  at_least.send(a);
  EXPECT_EQ(at_least.send(joined(run_of(1000, 40), run_of(7000, 40))).tokens, 0);  // below 64
}

TEST(BlockLruPolicy, TheLeastRecentlyUsedBlocksGoFirstATailBeforeItsHead) {
  BlockLruPolicy p(16, 0, 6);
  const auto a = run_of(1000, 64);  // 4 blocks
  p.send(a);
  p.send(run_of(2000, 32));  // 2 more: 6, full
  // Two more blocks push out a's last two (its tail is older than its head).
  p.send(run_of(3000, 32));
  EXPECT_EQ(p.send(joined(a, run_of(9000, 16))).tokens, 32);
}

}  // namespace
}  // namespace kvbench::workloads::trace
