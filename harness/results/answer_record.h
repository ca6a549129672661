#pragma once
// One line of answers.jsonl (the answers experiment, kvbench.answer v1): which block, server
// start and prompt it answers, and the answer: its token ids with each position's top-k
// (id, log-probability) list, its text (a kind without ids), or why there is none.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::results {

struct AnswerRecord {
  int block = 0;
  int replica = 0;
  int start = 1;  // 1: the block's server; 2: a second start of it (the control)
  std::string cache_type;
  int num_ctx = 0;
  std::string variant;
  int prompt = 0;  // the prompt's index in the experiment
  std::optional<std::string> error;
  std::optional<std::string> text;  // a kind that answers text only
  std::vector<int> ids;
  std::vector<std::vector<std::pair<int, double>>> top;  // per position, best first

  bool ok() const { return !error; }
};

// {"block", "replica", "start", "cache_type", "num_ctx", "variant", "prompt"} and "error", or
// "text", or "ids" with "top".
void to_json(nlohmann::json& j, const AnswerRecord& a);
// Throws nlohmann::json::exception for a line of another shape.
void from_json(const nlohmann::json& j, AnswerRecord& a);

}  // namespace kvbench::results
