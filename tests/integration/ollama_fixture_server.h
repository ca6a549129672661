#pragma once
// The Ollama fixture server (tests/fixtures) started as an attached server on a free port for one
// integration test, and stopped at its end.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/process/child.h"

namespace kvbench::itest {

// The fixture's KV bytes per token for synthetic-small at f16 (4 layers, 2 KV heads of 64): K and
// V rows of 128 values per layer.
inline constexpr std::int64_t kF16BytesPerToken = 4 * 2 * 128 * 2;

class OllamaFixtureServer {
 public:
  // Starts `ollama-fixture serve` with `env` added and waits until /api/version answers; a
  // fixture that does not answer fails the test. Its log goes to build/itest/<log_name>.
  explicit OllamaFixtureServer(const std::vector<std::pair<std::string, std::string>>& env = {},
                               const std::string& log_name = "fixture.log");
  // "http://127.0.0.1:<port>".
  const std::string& url() const { return url_; }
  bool running() { return child_.running(); }

 private:
  std::string url_;
  process::ChildProcess child_;
};

}  // namespace kvbench::itest
