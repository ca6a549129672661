#pragma once
// The words of a prompt that an edit may replace: each starts with a letter and is reduced to its
// leading letters, so trailing punctuation and digits stay where they are.

#include <cstddef>
#include <functional>
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

// Index of the word (of `n_words` > 0, in order) whose start is nearest to token index `target`,
// where start_token(w) is the token index word w starts at (non-decreasing in w): a binary
// search, so start_token is called O(log n_words) times.
std::size_t nearest_word(std::size_t n_words, int target,
                         const std::function<int(std::size_t)>& start_token);

// Every space- or newline-separated word of `text` that starts with a letter, in order.
std::vector<Word> letter_words(const std::string& text);

}  // namespace kvbench::prompt
