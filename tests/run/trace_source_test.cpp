// A replayed request's prompt: each block id one run of tokens, the same id the same tokens
// within a run (seed), other tokens in another run.

#include <numeric>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "harness/workloads/trace/source.h"

namespace kvbench::run {
namespace {

using workloads::trace::Request;

Request request(std::vector<std::uint64_t> blocks, int input) {
  Request r;
  r.blocks = std::move(blocks);
  r.input_tokens = input;
  return r;
}

std::vector<int> pool() {
  std::vector<int> p(500);
  std::iota(p.begin(), p.end(), 100);
  return p;
}

TEST(TracePrompt, SharedLeadingBlocksAreSharedTokensAndNothingMore) {
  const auto a = TraceSource::prompt_ids(request({7, 8, 9}, 40), 16, 1, pool());
  const auto b = TraceSource::prompt_ids(request({7, 8, 5}, 48), 16, 1, pool());
  ASSERT_EQ(a.size(), 40u);  // two whole blocks and 8 tokens of the last
  ASSERT_EQ(b.size(), 48u);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 32, b.begin()));
  EXPECT_NE(std::vector<int>(a.begin() + 32, a.end()),
            std::vector<int>(b.begin() + 32, b.begin() + 40));
  for (int id : a) {
    EXPECT_GE(id, 100);
    EXPECT_LT(id, 600);
  }
}

TEST(TracePrompt, ABlockIsTheSameWhereverItIsAndAnotherRunGetsOtherTokens) {
  const auto once = TraceSource::prompt_ids(request({3}, 16), 16, 42, pool());
  const auto again = TraceSource::prompt_ids(request({3, 4}, 32), 16, 42, pool());
  EXPECT_TRUE(std::equal(once.begin(), once.end(), again.begin()));
  const auto other_run = TraceSource::prompt_ids(request({3}, 16), 16, 43, pool());
  EXPECT_NE(once, other_run);
  // The tokens of a block vary: a prompt is no run of one token.
  EXPECT_GT(std::set<int>(once.begin(), once.end()).size(), 8u);
}

TEST(TracePrompt, TokensPastTheLastBlockIdAreTheRequestsOwn) {
  // WEKA: only whole blocks have ids; a 20-token tail follows the two of them.
  const auto r = TraceSource::prompt_ids(request({1, 2}, 52), 16, 9, pool());
  ASSERT_EQ(r.size(), 52u);
  const auto s = TraceSource::prompt_ids(request({1, 2, 5}, 48), 16, 9, pool());
  EXPECT_TRUE(std::equal(r.begin(), r.begin() + 32, s.begin()));
}

std::vector<TraceSource::Word> words() {
  return {{" a", {1}}, {" bc", {2, 3}}, {" def", {4, 5, 6}}, {" g", {7}}, {" hi", {8, 9}}};
}

TEST(TracePromptText, EachBlockIsWordsOfExactlyItsTokensTheSameWhereverItIs) {
  const auto [a, a_ids] = TraceSource::prompt_text(request({7, 8, 9}, 40), 16, 1, words());
  const auto [b, b_ids] = TraceSource::prompt_text(request({7, 8, 5}, 48), 16, 1, words());
  ASSERT_EQ(a_ids.size(), 40U);
  ASSERT_EQ(b_ids.size(), 48U);
  EXPECT_TRUE(std::equal(a_ids.begin(), a_ids.begin() + 32, b_ids.begin()));
  EXPECT_NE(std::vector<int>(a_ids.begin() + 32, a_ids.end()),
            std::vector<int>(b_ids.begin() + 32, b_ids.begin() + 40));
  // The text is the words whose ids these are, in order.
  std::string expected;
  std::vector<int> read;
  std::size_t at = 0;
  while (at < a.size()) {
    bool found = false;
    for (const auto& w : words()) {
      if (a.compare(at, w.text.size(), w.text) == 0 &&
          (at + w.text.size() == a.size() || a[at + w.text.size()] == ' ')) {
        read.insert(read.end(), w.ids.begin(), w.ids.end());
        at += w.text.size();
        found = true;
        break;
      }
    }
    ASSERT_TRUE(found) << a.substr(at);
  }
  EXPECT_EQ(read, a_ids);
  // Another run's seed: other words.
  EXPECT_NE(TraceSource::prompt_text(request({7, 8, 9}, 40), 16, 2, words()).second, a_ids);
}

TEST(TraceHostCache, ASavedTokenTakesItsKvRowsAndItsCell) {
  // tiny: 2 layers of 2 KV heads of 16: K and V rows of 32 numbers each, per layer.
  EXPECT_DOUBLE_EQ(TraceSource::state_bytes_per_token("synthetic:tiny", "f16"),
                   2 * 2 * 32 * 2 + 12);
  // q8_0: blocks of 32 numbers in 34 bytes.
  EXPECT_DOUBLE_EQ(TraceSource::state_bytes_per_token("synthetic:tiny", "q8_0"), 2 * 2 * 34 + 12);
  EXPECT_DOUBLE_EQ(TraceSource::state_bytes_per_token("synthetic:tiny", "no-such-type"), 0);
  EXPECT_DOUBLE_EQ(TraceSource::state_bytes_per_token("/no/such/model.gguf", "f16"), 0);
}

}  // namespace
}  // namespace kvbench::run
