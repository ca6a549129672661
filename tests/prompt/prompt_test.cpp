#include "harness/prompt/prompt.h"

#include <set>

#include <gtest/gtest.h>

namespace kvbench::prompt {
namespace {

// A stand-in tokenizer: BOS, then one token per three characters of each space-separated word,
// and one per newline; so appending a character sometimes adds a token and sometimes not.
int fake_count(std::string_view text) {
  int n = 1;
  std::size_t word = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n') {
      n += static_cast<int>((word + 2) / 3) + (c == '\n' ? 1 : 0);
      word = 0;
    } else {
      ++word;
    }
  }
  return n + static_cast<int>((word + 2) / 3);
}

TEST(Prompt, BuildsExactTokenCounts) {
  for (int target : {20, 21, 64, 255, 256, 1000, 4093}) {
    const auto b = build_prompt(target, "AA run abc call 1", 42, fake_count);
    EXPECT_TRUE(b.exact) << target;
    EXPECT_EQ(b.tokens, target);
    EXPECT_EQ(fake_count(b.text), target);
    EXPECT_EQ(b.text.rfind("AA run abc call 1\n", 0), 0U) << "first line first";
    EXPECT_LT(b.count_calls, 40) << "a logarithmic search, not a linear one";
  }
}

TEST(Prompt, TargetShorterThanFirstLineIsNotExact) {
  const auto b = build_prompt(3, "AA run abc call 1", 42, fake_count);
  EXPECT_FALSE(b.exact);
  EXPECT_GT(b.tokens, 3);
}

TEST(Prompt, FillerIsDeterministicFromSeed) {
  EXPECT_EQ(filler_words(5, 100), filler_words(5, 100));
  EXPECT_NE(filler_words(5, 100), filler_words(6, 100));
  const auto w = filler_words(5, 100);
  EXPECT_TRUE(std::isupper(static_cast<unsigned char>(w[0][0])));
  EXPECT_EQ(w.back().back(), '.');
}

TEST(Prompt, SameSeedSameTextDifferentNonceDifferentStart) {
  const auto a = build_prompt(300, nonce_line("r1", 1), 9, fake_count);
  const auto b = build_prompt(300, nonce_line("r1", 2), 9, fake_count);
  EXPECT_NE(a.text, b.text);
  EXPECT_NE(a.text[0], b.text[0]) << "consecutive calls differ in their first character";
}

TEST(Prompt, NoncesAreUniqueWithinAndAcrossRuns) {
  std::set<std::string> seen;
  for (const char* run : {"aaaa", "bbbb"}) {
    for (int seq = 0; seq < 500; ++seq) {
      EXPECT_TRUE(seen.insert(nonce_line(run, seq)).second);
    }
  }
  EXPECT_NE(new_run_id(), new_run_id());
  EXPECT_EQ(new_run_id().size(), 12U);
}

}  // namespace
}  // namespace kvbench::prompt
