#pragma once
// Edits for the prefix-reuse experiment on a server that gives no token ids (Ollama): the edit is
// placed by text, at the word whose estimated token index is nearest the target, and replaces it
// with a word of the same length and shape, so the prompt keeps its byte length and, on a server
// whose count follows the text, its token count. Pure: the token estimate is handed in.

#include <string>
#include <vector>

#include "harness/prompt/prompt.h"

namespace kvbench::prompt {

struct TextEdit {
  std::string text;                 // the edited prompt
  std::size_t first_diff_byte = 0;  // byte offset of the first difference (the end if none)
  int first_diff_tokens = 0;        // estimated tokens before it: count(text[0, first_diff_byte))
  std::string replaced;             // the original span
  std::string replacement;          // what replaced it
  bool same_length = true;          // the edited prompt has the original's byte length
  // Where the first difference sits in the text: first_diff_byte / the text's bytes, in [0, 1].
  double text_fraction() const;
};

// The unchanged resend: no difference, first_diff_tokens = count(text).
TextEdit unchanged_text(const std::string& text, const CountFn& count);

// Replaces text[pos, pos + len) with the first of `candidates` that differs from it and has its
// length; when none has, with the first differing candidate (same_length false).
TextEdit replace_span_by_text(const std::string& text, std::size_t pos, std::size_t len,
                              const std::vector<std::string>& candidates, const CountFn& count);

// Replaces one word at `fraction` (0..1) of the prompt's estimated tokens: the word whose start
// is nearest to that token, or a near neighbour when no substitute word has its length there,
// else that word with its first letter changed. Capitals and trailing punctuation are kept.
TextEdit edit_word_by_text(const std::string& text, double fraction, const CountFn& count);

}  // namespace kvbench::prompt
