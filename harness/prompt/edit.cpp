#include "harness/prompt/edit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "harness/prompt/words.h"

namespace kvbench::prompt {

namespace {

// Substitutes for `word`: other first letter first, then nearest in length; capitalised like it.
std::vector<std::string> candidates_for(std::string_view word) {
  std::vector<std::string> out = substitute_words();
  const char first = static_cast<char>(std::tolower(static_cast<unsigned char>(word[0])));
  auto rank = [&](const std::string& c) {
    const auto d = static_cast<long>(c.size()) - static_cast<long>(word.size());
    return std::pair((c[0] == first) ? 1 : 0, std::labs(d));
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  capitalise_like(word, out);
  return out;
}

// Index of the word whose start token is nearest to `target`, counting the tokens of each prefix
// tried (without its trailing spaces).
std::size_t nearest_word_by_ids(const std::string& text, const std::vector<int>& ids,
                                const std::vector<Word>& words, int target,
                                const TokenizeFn& tokenize, int& calls) {
  return prompt::nearest_word(words.size(), target, [&](std::size_t w) {
    std::string prefix = text.substr(0, words[w].pos);
    while (!prefix.empty() && prefix.back() == ' ') {
      prefix.pop_back();
    }
    ++calls;
    // Where the prefix's ids leave the whole prompt's: its end in the prompt's tokens, also where
    // a chat template adds tokens after it.
    return static_cast<int>(first_difference(tokenize(prefix), ids));
  });
}

}  // namespace

std::size_t first_difference(const std::vector<int>& a, const std::vector<int>& b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) {
    ++n;
  }
  return n;
}

int expected_reuse(const std::vector<int>& prompt, const std::vector<int>& slot) {
  if (prompt.empty()) {
    return 0;
  }
  return static_cast<int>(std::min(first_difference(prompt, slot), prompt.size() - 1));
}

Edit replace_span(const std::string& text, const std::vector<int>& ids, std::size_t pos,
                  std::size_t len, const std::vector<std::string>& candidates,
                  const TokenizeFn& tokenize) {
  const std::string original = text.substr(pos, len);
  Edit fallback{text, ids, static_cast<int>(ids.size()), original, original, true, 0};
  bool have_fallback = false;
  int calls = 0;
  for (const auto& c : candidates) {
    if (c == original) {
      continue;
    }
    std::string edited = text.substr(0, pos) + c + text.substr(pos + len);
    std::vector<int> edited_ids = tokenize(edited);
    ++calls;
    Edit e{std::move(edited), std::move(edited_ids), 0, original, c, false, 0};
    e.first_diff = static_cast<int>(first_difference(ids, e.ids));
    e.same_count = e.ids.size() == ids.size();
    if (e.same_count) {
      e.tokenize_calls = calls;
      return e;
    }
    if (!have_fallback) {
      fallback = std::move(e);
      have_fallback = true;
    }
  }
  fallback.tokenize_calls = calls;
  return fallback;
}

Edit edit_word_at(const std::string& text, const std::vector<int>& ids, double fraction,
                  const TokenizeFn& tokenize) {
  const std::vector<Word> words = letter_words(text);
  if (words.empty() || ids.empty()) {
    return replace_span(text, ids, 0, 0, {}, tokenize);
  }
  const int n = static_cast<int>(ids.size());
  const int target = std::clamp(static_cast<int>(std::lround(fraction * n)), 0, n - 1);
  int calls = 0;
  const auto w0 = static_cast<long>(nearest_word_by_ids(text, ids, words, target, tokenize, calls));
  Edit first;
  bool have_first = false;
  // The nearest word first, then its neighbours, alternating outwards.
  for (long step = 0; step < 12; ++step) {
    const long w = w0 + (step % 2 == 0 ? step / 2 : -(step + 1) / 2);
    if (w < 0 || w >= static_cast<long>(words.size())) {
      continue;
    }
    const Word& word = words[static_cast<std::size_t>(w)];
    Edit e =
        replace_span(text, ids, word.pos, word.len,
                     candidates_for(std::string_view(text).substr(word.pos, word.len)), tokenize);
    calls += e.tokenize_calls;
    if (e.same_count) {
      e.tokenize_calls = calls;
      return e;
    }
    if (!have_first) {
      first = std::move(e);
      have_first = true;
    }
  }
  first.tokenize_calls = calls;
  return first;
}

Built build_prompt_with_last_line(int target, std::string_view first_line,
                                  std::string_view last_line, std::uint64_t seed,
                                  const CountFn& count) {
  std::string tail(1, '\n');
  tail += last_line;
  const int tail_tokens = count(std::string(first_line) + tail) - count(first_line);
  int filler_target = target - tail_tokens;
  Built best;
  for (int attempt = 0; attempt < 4; ++attempt) {
    Built b = build_prompt(filler_target, first_line, seed, count);
    b.text += tail;
    b.tokens = count(b.text);
    b.count_calls += 3;
    b.exact = b.tokens == target;
    if (attempt == 0 || std::abs(b.tokens - target) < std::abs(best.tokens - target)) {
      best = b;
    }
    if (b.exact) {
      break;
    }
    filler_target += target - b.tokens;
  }
  return best;
}

std::string timestamp_line(std::int64_t unix_s) {
  const auto t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("Current time: {:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string question_line(std::string_view word) {
  return fmt::format("Question: what does the text above say about the {}?", word);
}

const std::vector<std::string>& substitute_words() {
  static const std::vector<std::string> kFillerWords = {
      "river",   "garden",  "window",  "morning", "letter",  "market", "engine",  "harbour",
      "silver",  "quiet",   "bright",  "winter",  "station", "paper",  "orchard", "lantern",
      "yellow",  "copper",  "candle",  "forest",  "meadow",  "pocket", "village", "mountain",
      "kitchen", "evening", "history", "blue",    "red",     "oak",    "sun",     "cup",
      "map",     "key",     "ink",     "owl",     "fox",     "bell",   "rain",    "salt",
      "wool",    "stone",   "cloud",   "a",       "so",      "go",     "up",      "we"};
  return kFillerWords;
}

}  // namespace kvbench::prompt
