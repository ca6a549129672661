#include "harness/prompt/words.h"

#include <cctype>

namespace kvbench::prompt {

bool is_letter(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}

void capitalise_like(std::string_view like, std::vector<std::string>& words) {
  if (like.empty() || std::isupper(static_cast<unsigned char>(like[0])) == 0) {
    return;
  }
  for (auto& w : words) {
    if (!w.empty()) {
      w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
    }
  }
}

std::size_t nearest_word(std::size_t n_words, int target,
                         const std::function<int(std::size_t)>& start_token) {
  std::size_t lo = 0;
  std::size_t hi = n_words;  // the first word starting at or after target lies in [lo, hi]
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (start_token(mid) < target) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == n_words) {
    return n_words - 1;
  }
  if (lo > 0 && target - start_token(lo - 1) < start_token(lo) - target) {
    return lo - 1;
  }
  return lo;
}

std::vector<Word> letter_words(const std::string& text) {
  std::vector<Word> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\n') {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < text.size() && is_letter(text[i])) {
      ++i;
    }
    if (i > start) {
      out.push_back({start, i - start});
    }
    while (i < text.size() && text[i] != ' ' && text[i] != '\n') {
      ++i;
    }
  }
  return out;
}

}  // namespace kvbench::prompt
