#include "tests/integration/ollama_fixture_server.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "harness/process/ports.h"
#include "tests/integration/harness.h"

namespace kvbench::itest {

namespace fs = std::filesystem;

OllamaFixtureServer::OllamaFixtureServer(
    const std::vector<std::pair<std::string, std::string>>& env, const std::string& log_name) {
  const int port = process::find_free_loopback_port();
  url_ = "http://127.0.0.1:" + std::to_string(port);
  process::SpawnSpec spec;
  spec.argv = {KVBENCH_OLLAMA_FIXTURE, "serve"};
  spec.env_set = env;
  spec.env_set.emplace_back("OLLAMA_HOST", "127.0.0.1:" + std::to_string(port));
  fs::create_directories(fs::path(KVBENCH_BUILD_DIR) / "itest");
  spec.log_path = fs::path(KVBENCH_BUILD_DIR) / "itest" / log_name;
  child_ = process::ChildProcess::spawn(spec);
  if (answers_soon(url_ + "/api/version")) {
    return;
  }
  ADD_FAILURE() << "the fixture did not answer at " << url_;
}

}  // namespace kvbench::itest
