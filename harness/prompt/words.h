#pragma once
// The words of a prompt that an edit may replace: each starts with a letter and is reduced to its
// leading letters, so trailing punctuation and digits stay where they are.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::prompt {

struct Word {
  std::size_t pos = 0;  // first letter
  std::size_t len = 0;  // letters only
};

// Whether `c` is an ASCII letter.
bool is_letter(char c);

// Gives every word of `words` an upper-case first letter when `like` starts with one.
void capitalise_like(std::string_view like, std::vector<std::string>& words);

// Every space- or newline-separated word of `text` that starts with a letter, in order.
std::vector<Word> letter_words(const std::string& text);

}  // namespace kvbench::prompt
