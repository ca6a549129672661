#include "harness/prompt/text_edit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include "harness/prompt/edit.h"
#include "harness/prompt/words.h"

namespace kvbench::prompt {

namespace {

constexpr long kNeighbourSteps = 12;

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool same_word(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

// Substitute words of exactly `word`'s length, another first letter first, capitalised like it.
std::vector<std::string> same_shape_substitutes(std::string_view word) {
  std::vector<std::string> out;
  for (const auto& w : substitute_words()) {
    if (w.size() == word.size() && !same_word(w, word)) {
      out.push_back(w);
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return (a[0] == lower(word[0]) ? 1 : 0) < (b[0] == lower(word[0]) ? 1 : 0);
  });
  capitalise_like(word, out);
  return out;
}

// The word with its first letter changed, keeping its case: always the same length.
std::string first_letter_changed(std::string_view word) {
  std::string out(word);
  const char first = lower(word[0]) == 'b' ? 'c' : 'b';
  out[0] = std::isupper(static_cast<unsigned char>(word[0])) != 0
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(first)))
               : first;
  return out;
}

// Index of the word whose start's estimated token index is nearest to `target`.
std::size_t nearest_word_by_count(const std::string& text, const std::vector<Word>& words,
                                  int target, const CountFn& count) {
  return prompt::nearest_word(words.size(), target, [&](std::size_t w) {
    return count(std::string_view(text).substr(0, words[w].pos));
  });
}

TextEdit make_edit(const std::string& text, std::size_t pos, std::size_t len,
                   const std::string& replacement, const CountFn& count) {
  TextEdit e;
  e.replaced = text.substr(pos, len);
  e.replacement = replacement;
  e.text = text.substr(0, pos) + replacement + text.substr(pos + len);
  std::size_t common = 0;
  while (common < len && common < replacement.size() && e.replaced[common] == replacement[common]) {
    ++common;
  }
  e.first_diff_byte = pos + common;
  e.first_diff_tokens = count(std::string_view(text).substr(0, e.first_diff_byte));
  e.same_length = e.text.size() == text.size();
  return e;
}

}  // namespace

double TextEdit::text_fraction() const {
  return text.empty() ? 0.0
                      : static_cast<double>(first_diff_byte) / static_cast<double>(text.size());
}

TextEdit unchanged_text(const std::string& text, const CountFn& count) {
  TextEdit e;
  e.text = text;
  e.first_diff_byte = text.size();
  e.first_diff_tokens = count(text);
  return e;
}

TextEdit replace_span_by_text(const std::string& text, std::size_t pos, std::size_t len,
                              const std::vector<std::string>& candidates, const CountFn& count) {
  const std::string_view original = std::string_view(text).substr(pos, len);
  const std::string* fallback = nullptr;
  for (const auto& c : candidates) {
    if (c == original) {
      continue;
    }
    if (c.size() == original.size()) {
      return make_edit(text, pos, len, c, count);
    }
    fallback = fallback != nullptr ? fallback : &c;
  }
  if (fallback == nullptr) {
    return unchanged_text(text, count);
  }
  return make_edit(text, pos, len, *fallback, count);
}

TextEdit edit_word_by_text(const std::string& text, double fraction, const CountFn& count) {
  const std::vector<Word> words = letter_words(text);
  if (words.empty()) {
    return unchanged_text(text, count);
  }
  const int n = count(text);
  const int target = std::clamp(static_cast<int>(std::lround(fraction * n)), 0, std::max(n - 1, 0));
  const auto w0 = static_cast<long>(nearest_word_by_count(text, words, target, count));
  // The nearest word first, then its neighbours, alternating outwards.
  for (long step = 0; step < kNeighbourSteps; ++step) {
    const long w = w0 + (step % 2 == 0 ? step / 2 : -(step + 1) / 2);
    if (w < 0 || w >= static_cast<long>(words.size())) {
      continue;
    }
    const Word& word = words[static_cast<std::size_t>(w)];
    const auto subs = same_shape_substitutes(std::string_view(text).substr(word.pos, word.len));
    if (!subs.empty()) {
      return make_edit(text, word.pos, word.len, subs.front(), count);
    }
  }
  const Word& word = words[static_cast<std::size_t>(w0)];
  return make_edit(text, word.pos, word.len,
                   first_letter_changed(std::string_view(text).substr(word.pos, word.len)), count);
}

}  // namespace kvbench::prompt
