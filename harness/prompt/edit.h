#pragma once
// Edits for the prefix-reuse experiment: the same prompt sent again with one word (or one line)
// changed at a chosen place, keeping its token count, plus what the server should then reuse.
// Pure: the tokenizer is handed in.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/prompt/prompt.h"

namespace kvbench::prompt {

// The token ids the server will read for a text sent as a prompt (BOS included).
using TokenizeFn = std::function<std::vector<int>(std::string_view)>;

// Index of the first token where `a` and `b` differ (the shorter length if one is a prefix).
std::size_t first_difference(const std::vector<int>& a, const std::vector<int>& b);

// Tokens llama-server reuses when its slot last read `slot` and now reads `prompt`: the longest
// common prefix, capped at prompt.size() - 1 because it always re-reads at least one token.
int expected_reuse(const std::vector<int>& prompt, const std::vector<int>& slot);

struct Edit {
  std::string text;         // the edited prompt
  std::vector<int> ids;     // its tokens
  int first_diff = 0;       // token index of the first difference from the original
  std::string replaced;     // the original span
  std::string replacement;  // what replaced it
  bool same_count = false;  // the edited prompt has exactly the original's token count
  int tokenize_calls = 0;
};

// Replaces text[pos, pos + len) with the first of `candidates` that differs from it and keeps the
// token count. When none does, returns the first differing candidate with same_count false.
Edit replace_span(const std::string& text, const std::vector<int>& ids, std::size_t pos,
                  std::size_t len, const std::vector<std::string>& candidates,
                  const TokenizeFn& tokenize);

// Replaces one word at `fraction` (0..1) of the prompt's tokens with another word of the same
// token count: the word whose start is nearest to that token, or a neighbour when no candidate
// keeps the count there. Leading capitals and trailing punctuation of the word are kept.
Edit edit_word_at(const std::string& text, const std::vector<int>& ids, double fraction,
                  const TokenizeFn& tokenize);

// Like build_prompt, with `last_line` as the final line (after a newline) and the whole prompt of
// `target` tokens; `exact` is false when no filler length reached the target exactly.
Built build_prompt_with_last_line(int target, std::string_view first_line,
                                  std::string_view last_line, std::uint64_t seed,
                                  const CountFn& count);

// "Current time: 2025-11-30 03:16:42 UTC" for seconds since the Unix epoch.
std::string timestamp_line(std::int64_t unix_s);

// The question line of a prompt, asking about `word`.
std::string question_line(std::string_view word);

// Words to substitute into a question line or a prompt, in a fixed order.
const std::vector<std::string>& substitute_words();

}  // namespace kvbench::prompt
