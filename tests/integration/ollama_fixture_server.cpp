#include "tests/integration/ollama_fixture_server.h"

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "harness/core/clock.h"
#include "harness/http/curl_transport.h"
#include "harness/process/ports.h"

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
  SteadyClock clock;
  http::CurlTransport transport(clock);
  http::Request req;
  req.method = "GET";
  req.url = url_ + "/api/version";
  req.timeout = std::chrono::milliseconds(1000);
  for (int i = 0; i < 100; ++i) {
    const auto r = transport.fetch(req);
    if (r.outcome == http::Outcome::ok && r.http_status == 200) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "the fixture did not answer at " << url_;
}

}  // namespace kvbench::itest
