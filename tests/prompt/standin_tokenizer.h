#pragma once
// A stand-in for the server's tokenizer in unit tests, shaped like SentencePiece: BOS (id 1),
// then each space-separated word in pieces of up to three characters (the first piece marked as
// starting a word, like "▁"), and one token per newline. Different text gives different ids.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::testing {

inline std::vector<int> standin_tokenize(std::string_view text) {
  std::vector<int> ids = {1};
  auto piece_id = [](std::string_view piece, bool starts_word) {
    const std::size_t h = std::hash<std::string_view>{}(piece);
    return 3 + static_cast<int>((h % 30000) * 2 + (starts_word ? 1 : 0));
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    if (text[i] == '\n') {
      ids.push_back(2);
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n') {
      ++i;
    }
    for (std::size_t p = start; p < i; p += 3) {
      ids.push_back(piece_id(text.substr(p, std::min<std::size_t>(3, i - p)), p == start));
    }
  }
  return ids;
}

inline int standin_count(std::string_view text) {
  return static_cast<int>(standin_tokenize(text).size());
}

}  // namespace kvbench::testing
