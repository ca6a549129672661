#include "harness/prompt/edit.h"

#include <sstream>

#include <gtest/gtest.h>

#include "tests/prompt/standin_tokenizer.h"

namespace kvbench::prompt {
namespace {

using kvbench::testing::standin_count;
using kvbench::testing::standin_tokenize;

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    out.push_back(w);
  }
  return out;
}

Built fresh_prompt(int tokens, std::uint64_t seed) {
  return build_prompt(tokens, nonce_line("0123456789ab", static_cast<int>(seed)), seed,
                      standin_count);
}

TEST(Edit, WordEditKeepsTokenCountAcrossSeedsAndPositions) {
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    const Built b = fresh_prompt(static_cast<int>(200 + 97 * seed), seed);
    ASSERT_TRUE(b.exact);
    const auto ids = standin_tokenize(b.text);
    const int n = static_cast<int>(ids.size());
    for (double f : {0.0, 0.01, 0.1, 0.25, 0.33, 0.5, 0.75, 0.9, 0.99, 1.0}) {
      const Edit e = edit_word_at(b.text, ids, f, standin_tokenize);
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " f " << f << " " << e.replaced
                                        << " -> " << e.replacement);
      EXPECT_TRUE(e.same_count);
      EXPECT_EQ(e.ids.size(), ids.size());
      EXPECT_EQ(e.ids, standin_tokenize(e.text)) << "the ids are the edited text's";
      EXPECT_EQ(e.first_diff, static_cast<int>(first_difference(ids, e.ids)));
      EXPECT_LT(e.first_diff, n) << "the edit changed something";
      // Exactly one word changed.
      const auto before = words_of(b.text);
      const auto after = words_of(e.text);
      ASSERT_EQ(before.size(), after.size());
      int changed = 0;
      for (std::size_t i = 0; i < before.size(); ++i) {
        changed += before[i] != after[i] ? 1 : 0;
      }
      EXPECT_EQ(changed, 1);
      // The first difference lies within a word or two of the asked-for token.
      const double target = std::min(f * n, n - 1.0);
      EXPECT_LE(std::abs(e.first_diff - target), 6.0) << "n " << n;
      EXPECT_LT(e.tokenize_calls, 40) << "a binary search, then a few candidates";
    }
  }
}

TEST(Edit, EdgePositionsAndTheirExpectedReuse) {
  const Built b = fresh_prompt(500, 7);
  const auto ids = standin_tokenize(b.text);
  const int n = static_cast<int>(ids.size());
  ASSERT_EQ(n, 500);
  // At 0 the first word after BOS changes: only BOS is shared, and reused.
  const Edit at0 = edit_word_at(b.text, ids, 0.0, standin_tokenize);
  EXPECT_EQ(at0.first_diff, 1);
  EXPECT_EQ(expected_reuse(at0.ids, ids), 1);
  // At 1 the last word changes: everything before it is reused.
  const Edit at1 = edit_word_at(b.text, ids, 1.0, standin_tokenize);
  const std::string last_word = words_of(b.text).back();
  const int last_word_tokens = static_cast<int>((last_word.size() + 2) / 3);
  EXPECT_EQ(at1.first_diff, n - last_word_tokens);
  EXPECT_EQ(expected_reuse(at1.ids, ids), n - last_word_tokens);
  EXPECT_EQ(at1.text.substr(0, at1.text.rfind(' ')), b.text.substr(0, b.text.rfind(' ')));
  // At 0.5 the reuse is the first difference itself.
  const Edit half = edit_word_at(b.text, ids, 0.5, standin_tokenize);
  EXPECT_EQ(expected_reuse(half.ids, ids), half.first_diff);
}

TEST(Edit, ExpectedReuseIsTheSharedPrefixCappedOneShort) {
  const std::vector<int> p = {1, 10, 11, 12, 13};
  EXPECT_EQ(expected_reuse({}, p), 0) << "an empty prompt reuses nothing";
  EXPECT_EQ(expected_reuse(p, {}), 0) << "a fresh slot holds nothing";
  EXPECT_EQ(expected_reuse(p, {2, 10, 11}), 0) << "differs at the first token";
  EXPECT_EQ(expected_reuse(p, {1, 99}), 1) << "only BOS shared";
  EXPECT_EQ(expected_reuse(p, {1, 10, 11}), 3) << "the slot's whole prompt is a prefix";
  EXPECT_EQ(expected_reuse(p, {1, 10, 11, 12, 99, 100}), 4) << "differs at the last token";
  EXPECT_EQ(expected_reuse(p, p), 4) << "unchanged: the last token is re-read";
  EXPECT_EQ(expected_reuse(p, {1, 10, 11, 12, 13, 14, 15}), 4) << "a prefix of the slot: capped";
  EXPECT_EQ(expected_reuse({1}, {1}), 0) << "a one-token prompt is always read";
}

TEST(Edit, ReplaceSpanReportsWhenNoCandidateKeepsTheCount) {
  const std::string text = "AA first line\nsome words here";
  const auto ids = standin_tokenize(text);
  const std::size_t pos = text.find("some");
  const Edit fits =
      replace_span(text, ids, pos, 4, {"some", "muchlonger", "wood"}, standin_tokenize);
  EXPECT_TRUE(fits.same_count);
  EXPECT_EQ(fits.replacement, "wood") << "the unchanged and the longer candidate are skipped";
  EXPECT_EQ(fits.text, "AA first line\nwood words here");
  EXPECT_EQ(fits.first_diff, 7) << "after BOS, AA, fir, st, lin, e and the newline";
  const Edit none = replace_span(text, ids, pos, 4, {"muchlonger", "some"}, standin_tokenize);
  EXPECT_FALSE(none.same_count);
  EXPECT_EQ(none.replacement, "muchlonger") << "the first differing candidate, flagged";
}

TEST(Edit, LastLinePromptIsExactAndEndsWithTheLine) {
  for (int target : {64, 300, 1001}) {
    const std::string q = question_line("river");
    const Built b = build_prompt_with_last_line(target, "AA run x call 1", q, 3, standin_count);
    EXPECT_TRUE(b.exact) << target;
    EXPECT_EQ(standin_count(b.text), target);
    EXPECT_EQ(b.text.substr(b.text.size() - q.size() - 1), "\n" + q);
    EXPECT_EQ(b.text.rfind("AA run x call 1\n", 0), 0U);
  }
}

TEST(Edit, TimestampLines) {
  EXPECT_EQ(timestamp_line(0), "Current time: 1970-01-01 00:00:00 UTC");
  EXPECT_EQ(timestamp_line(1764472602), "Current time: 2025-11-30 03:16:42 UTC");
}

}  // namespace
}  // namespace kvbench::prompt
