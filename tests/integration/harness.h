#pragma once
// Shared pieces of the integration tests: running the kvbench binary against the real
// llama-server that scripts/get-llama-server.sh installs, in a fresh results folder.

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/process/child.h"
#include "harness/process/run_capture.h"

namespace kvbench::itest {

struct KvbenchResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The llama-server launcher under .deps/ of the source tree; fails the test when missing.
std::string llama_server_path();

// A fresh, empty folder for one test's results.
std::filesystem::path fresh_dir(const std::string& name);

// Runs `kvbench args...` with synthetic models cached in the build's models folder.
// `env` adds variables to kvbench's environment.
KvbenchResult run_kvbench(const std::vector<std::string>& args, int timeout_s = 600,
                          const std::vector<std::pair<std::string, std::string>>& env = {});

// Writes scenario text to dir/name and returns the path.
std::string write_file(const std::filesystem::path& dir, const std::string& name,
                       const std::string& text);

// The one run folder inside `results`.
std::filesystem::path only_run_dir(const std::filesystem::path& results);

nlohmann::json read_json(const std::filesystem::path& path);

// The number the first line of the log at `path` that matches `pattern` captures (its first
// group): what a server wrote of itself ("llama_context: n_batch = (\d+)"); -1 when none does.
int logged_number(const std::filesystem::path& path, const std::string& pattern);
std::vector<CallRecord> read_calls(const std::filesystem::path& run_dir);

// A llama-server started by hand (as a user would) on 127.0.0.1:`port`, serving `model` with a
// `ctx`-token window and one slot; `threads` > 0 adds -t. Its log goes to `log`.
process::ChildProcess serve_by_hand(const std::filesystem::path& model, int port,
                                    const std::filesystem::path& log, int threads = 0,
                                    int ctx = 1024);

// Runs `kvbench run scenario --results results -q` until it succeeds (servers started by hand
// may still be loading), at most 50 times 200 ms apart; the last result either way.
KvbenchResult run_when_ready(const std::string& scenario, const std::filesystem::path& results);

// GETs `url` (with `headers`) every 50 ms until it answers 2xx, at most `attempts` times; whether
// it did. For fixture servers just started.
bool answers_soon(const std::string& url,
                  const std::vector<std::pair<std::string, std::string>>& headers = {},
                  int attempts = 100);

// Process ids of live processes whose command line contains `needle`.
std::vector<int> processes_with(const std::string& needle);

// The hosted-API fixture (tests/fixtures/hosted_api_fixture.cpp) on a free port, with `env`; it
// answers /v1/models before the test goes on.
class HostedFixture {
 public:
  HostedFixture(const std::vector<std::pair<std::string, std::string>>& env,
                const std::filesystem::path& log);
  ~HostedFixture() { child_.stop(std::chrono::milliseconds(2000)); }
  HostedFixture(const HostedFixture&) = delete;
  HostedFixture& operator=(const HostedFixture&) = delete;
  const std::string& url() const { return url_; }

 private:
  std::string url_;
  process::ChildProcess child_;
};

}  // namespace kvbench::itest
