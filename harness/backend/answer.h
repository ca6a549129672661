#pragma once
// Greedy answers with their top-k probabilities, for comparing what a model writes under two
// cache types: llama-server's POST /completion, not streamed, temperature 0 with a fixed seed,
// the prompt read afresh (cache_prompt false), its generated token ids and, per position, the
// n_probs most likely tokens with their log-probabilities.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/http/transport.h"

namespace kvbench::backend {

struct Answer {
  // Text only (a server that gives no token ids, e.g. Ollama's /api/generate): `text` is the
  // answer and `ids` and `top` are empty.
  bool text_only = false;
  std::string text;
  std::vector<int> ids;  // the generated tokens
  // Per generated position: the top tokens (id, log-probability), most likely first.
  std::vector<std::vector<std::pair<int, double>>> top;
  std::string error;  // non-empty: no answer
  bool ok() const { return error.empty(); }
};

struct AnswerSpec {
  int tokens = 64;  // generated per prompt (the end-of-text token ignored)
  int top_k = 10;
  std::uint64_t seed = 42;
};

// The request body for `prompt`. Pure.
nlohmann::json answer_body(const std::string& prompt, const AnswerSpec& spec);

// The answer in a /completion response: "tokens" (with return_tokens) and
// "completion_probabilities" ({"id", "logprob", "top_logprobs": [{"id", "logprob"}]} per
// position). An answer whose body lacks them, or whose lists disagree in length, carries an
// error saying so. Pure.
Answer parse_answer(const nlohmann::json& body);

// POST <root>/completion with `prompt`. Never throws: a failed call is an Answer with an error.
Answer fetch_answer(http::Transport& transport, const std::string& root, const std::string& api_key,
                    const std::string& prompt, const AnswerSpec& spec);

}  // namespace kvbench::backend
