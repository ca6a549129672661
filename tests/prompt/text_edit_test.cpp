#include "harness/prompt/text_edit.h"

#include <sstream>

#include <gtest/gtest.h>

#include "harness/prompt/edit.h"

namespace kvbench::prompt {
namespace {

// A length-calibrated estimate like the one kvbench fits on Ollama: BOS plus one token per 4
// bytes.
int estimate(std::string_view text) {
  return 1 + static_cast<int>((text.size() + 3) / 4);
}

std::vector<std::string> text_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    out.push_back(w);
  }
  return out;
}

Built fresh_text_prompt(int tokens, std::uint64_t seed) {
  return build_prompt(tokens, nonce_line("0123456789ab", static_cast<int>(seed)), seed, estimate);
}

TEST(TextEdit, WordEditKeepsTheLengthAndLandsNearTheTargetToken) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Built b = fresh_text_prompt(static_cast<int>(300 + 83 * seed), seed);
    const int n = estimate(b.text);
    for (double f : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0}) {
      const TextEdit e = edit_word_by_text(b.text, f, estimate);
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " f " << f << " " << e.replaced
                                        << " -> " << e.replacement);
      EXPECT_TRUE(e.same_length);
      EXPECT_EQ(e.text.size(), b.text.size());
      EXPECT_NE(e.text, b.text);
      EXPECT_EQ(e.text.compare(0, e.first_diff_byte, b.text, 0, e.first_diff_byte), 0);
      EXPECT_NE(e.text[e.first_diff_byte], b.text[e.first_diff_byte]);
      EXPECT_EQ(e.first_diff_tokens, estimate(b.text.substr(0, e.first_diff_byte)));
      EXPECT_DOUBLE_EQ(e.text_fraction(),
                       static_cast<double>(e.first_diff_byte) / static_cast<double>(b.text.size()));
      const auto before = text_words(b.text);
      const auto after = text_words(e.text);
      ASSERT_EQ(before.size(), after.size());
      int changed = 0;
      for (std::size_t i = 0; i < before.size(); ++i) {
        changed += before[i] != after[i] ? 1 : 0;
      }
      EXPECT_EQ(changed, 1);
      // A word or two from the asked-for token: words are at most 9 bytes, 3 tokens here.
      const double target = std::min(f * n, n - 1.0);
      EXPECT_LE(std::abs(e.first_diff_tokens - target), 7.0) << "n " << n;
    }
  }
}

TEST(TextEdit, ReplacementKeepsCapitalsAndPunctuation) {
  const std::string text = "AA run x call 1\nThe river. Garden window,";
  const TextEdit e = edit_word_by_text(text, 0.0, estimate);
  EXPECT_EQ(e.replaced, "AA") << "the first word starting with a letter";
  EXPECT_EQ(e.replacement.size(), 2U);
  EXPECT_TRUE(std::isupper(static_cast<unsigned char>(e.replacement[0])) != 0);
  const TextEdit g = edit_word_by_text(text, 0.9, estimate);
  EXPECT_EQ(g.replaced, "window");
  EXPECT_EQ(g.text.substr(g.text.size() - 1), ",");
  EXPECT_EQ(g.replacement.size(), 6U);
  EXPECT_NE(g.replacement[0], 'w') << "another first letter, so the difference starts there";
  EXPECT_EQ(g.first_diff_byte, text.find("window"));
}

TEST(TextEdit, WordWithoutSubstituteTakesANeighbourOrChangesItsFirstLetter) {
  // "mountain" is the only 8-letter substitute: its neighbour "red" is edited instead.
  const TextEdit n = edit_word_by_text("x\nred mountain", 1.0, estimate);
  EXPECT_EQ(n.replaced, "red");
  // A lone one-letter word has no substitute and no neighbour.
  const TextEdit a = edit_word_by_text("1\na", 1.0, estimate);
  EXPECT_EQ(a.replaced, "a");
  EXPECT_EQ(a.replacement, "b");
  EXPECT_EQ(a.text, "1\nb");
  EXPECT_TRUE(a.same_length);
}

TEST(TextEdit, SpanReplacementPrefersTheSameLength) {
  const std::string text = "AA\nfiller\n" + question_line("river");
  const std::size_t pos = text.rfind("river");
  const TextEdit e = replace_span_by_text(text, pos, 5, {"river", "oak", "paper"}, estimate);
  EXPECT_EQ(e.replacement, "paper");
  EXPECT_TRUE(e.same_length);
  EXPECT_EQ(e.first_diff_byte, pos);
  EXPECT_EQ(e.first_diff_tokens, estimate(text.substr(0, pos)));
  const TextEdit f = replace_span_by_text(text, pos, 5, {"oak"}, estimate);
  EXPECT_EQ(f.replacement, "oak");
  EXPECT_FALSE(f.same_length);
}

TEST(TextEdit, UnchangedResendDiffersNowhere) {
  const TextEdit e = unchanged_text("AA\nsome text", estimate);
  EXPECT_EQ(e.text, "AA\nsome text");
  EXPECT_EQ(e.first_diff_byte, e.text.size());
  EXPECT_EQ(e.first_diff_tokens, estimate("AA\nsome text"));
  EXPECT_DOUBLE_EQ(e.text_fraction(), 1.0);
  EXPECT_TRUE(e.same_length);
}

}  // namespace
}  // namespace kvbench::prompt
