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
