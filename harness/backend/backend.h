#pragma once
// The one interface every server kind implements: count tokens, stream one completion, describe
// itself. Adding a server kind is one new implementation of Backend.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"

namespace kvbench::backend {

struct CompletionSpec {
  std::string prompt;
  int max_tokens = 32;
  std::uint64_t seed = 0;
  bool cache_prompt = true;
  std::chrono::milliseconds timeout{0};  // 0 = none
  int slot = 0;                          // llama-server: the id_slot the call is pinned to
};

// What one call produced. Server faults are data: outcome and error say what went wrong.
struct CallResult {
  CallTrace trace;
  ServerTiming server;
  std::string outcome = "ok";
  std::optional<long> http_status;
  std::string error;
};

class Backend {
 public:
  Backend() = default;
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string_view name() const = 0;
  // Tokens the server will count for `text` sent as a prompt. Throws kvbench::Error when the
  // server cannot answer (a setup failure, not a measurement).
  virtual int count_tokens(std::string_view text) = 0;
  // The token ids the server will read for `text` (BOS included); empty when the server kind
  // has no tokenizer endpoint. Throws kvbench::Error like count_tokens.
  virtual std::vector<int> tokenize(std::string_view text) = 0;
  // Streams one completion. Never throws for a server fault.
  virtual CallResult complete(const CompletionSpec& spec) = 0;
  // What the server reports about itself (llama-server: /props), for run.json.
  virtual nlohmann::json describe() = 0;
};

}  // namespace kvbench::backend
