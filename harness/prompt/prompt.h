#pragma once
// Prompts built to an exact token count with the server's own tokenizer. The first line of a
// timed prompt is a nonce, unique per run and call, so no prompt cache can serve it; the rest is
// natural-looking filler, deterministic from a seed.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::prompt {

// Counts tokens the way the server will when the text is sent as a prompt (BOS included).
using CountFn = std::function<int(std::string_view)>;

// `n` filler words, deterministic from `seed`, with sentence capitals and punctuation.
std::vector<std::string> filler_words(std::uint64_t seed, std::size_t n);

// A fresh run id: 12 lowercase hex digits from the system's entropy source and the time.
std::string new_run_id();

// The nonce line of call `seq`: begins with a character that cycles with seq so that two
// consecutive prompts never share their first token; unique within the run by seq and across
// runs by run_id.
std::string nonce_line(std::string_view run_id, int seq);

struct Built {
  std::string text;
  int tokens = 0;  // as counted; equals the target unless `exact` is false
  bool exact = false;
  int count_calls = 0;  // tokenizer calls it took
};

// Builds `first_line` + "\n" + filler of exactly `target` tokens by searching the word count
// with `count`, then padding character by character. `exact` is false when the first line alone
// is longer than the target or no padding reached it exactly (the closest lower count is kept).
Built build_prompt(int target, std::string_view first_line, std::uint64_t seed,
                   const CountFn& count);

}  // namespace kvbench::prompt
