#include "tests/integration/harness.h"

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "harness/core/clock.h"
#include "harness/http/curl_transport.h"
#include "harness/process/ports.h"

namespace kvbench::itest {

namespace fs = std::filesystem;

std::string llama_server_path() {
  const fs::path p = fs::path(KVBENCH_SOURCE_DIR) / ".deps/llama/bin/llama-server";
  if (!fs::exists(p)) {
    ADD_FAILURE() << p << " is missing: run scripts/get-llama-server.sh";
  }
  return p.string();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(KVBENCH_BUILD_DIR) / "itest" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

KvbenchResult run_kvbench(const std::vector<std::string>& args, int timeout_s,
                          const std::vector<std::pair<std::string, std::string>>& env) {
  process::SpawnSpec spec;
  spec.argv = {KVBENCH_BINARY};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_set = {{"KVBENCH_MODELS_DIR", std::string(KVBENCH_BUILD_DIR) + "/models"},
                  {"KVBENCH_LLAMA_SERVER", llama_server_path()}};
  spec.env_set.insert(spec.env_set.end(), env.begin(), env.end());
  const auto r = process::run_capture(spec, std::chrono::seconds(timeout_s));
  KvbenchResult out;
  out.out = r.stdout_text;
  out.err = r.stderr_text;
  if (r.status && r.status->kind == process::ExitStatus::Kind::exited) {
    out.exit_code = r.status->code;
  }
  return out;
}

std::string write_file(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

fs::path only_run_dir(const fs::path& results) {
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(results)) {
    if (e.is_directory()) {
      dirs.push_back(e.path());
    }
  }
  EXPECT_EQ(dirs.size(), 1U) << "run folders in " << results;
  return dirs.empty() ? fs::path() : dirs.front();
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::vector<CallRecord> read_calls(const fs::path& run_dir) {
  std::vector<CallRecord> out;
  std::ifstream in(run_dir / "calls.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(record_from_json(nlohmann::json::parse(line)));
  }
  return out;
}

std::vector<int> processes_with(const std::string& needle) {
  std::vector<int> pids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in(e.path() / "cmdline");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string cmd = ss.str();
    for (char& c : cmd) {
      c = c == '\0' ? ' ' : c;
    }
    if (cmd.find(needle) != std::string::npos) {
      pids.push_back(std::stoi(name));
    }
  }
  return pids;
}

process::ChildProcess serve_by_hand(const std::filesystem::path& model, int port,
                                    const std::filesystem::path& log, int threads, int ctx) {
  process::SpawnSpec spec;
  spec.argv = {llama_server_path(), "-m", model.string(), "-c", std::to_string(ctx), "-np", "1"};
  if (threads > 0) {
    spec.argv.insert(spec.argv.end(), {"-t", std::to_string(threads)});
  }
  spec.argv.insert(spec.argv.end(), {"--host", "127.0.0.1", "--port", std::to_string(port)});
  spec.log_path = log;
  return process::ChildProcess::spawn(spec);
}

int logged_number(const std::filesystem::path& path, const std::string& pattern) {
  std::ifstream in(path);
  const std::regex line(pattern);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) {
      return std::stoi(m[1].str());
    }
  }
  return -1;
}

bool answers_soon(const std::string& url,
                  const std::vector<std::pair<std::string, std::string>>& headers, int attempts) {
  SteadyClock clock;
  http::CurlTransport transport(clock);
  http::Request req;
  req.method = "GET";
  req.url = url;
  req.headers = headers;
  req.timeout = std::chrono::milliseconds(1000);
  for (int i = 0; i < attempts; ++i) {
    const auto r = transport.fetch(req);
    if (r.outcome == http::Outcome::ok) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

KvbenchResult run_when_ready(const std::string& scenario, const std::filesystem::path& results) {
  KvbenchResult r;
  for (int attempt = 0; attempt < 50; ++attempt) {
    r = run_kvbench({"run", scenario, "--results", results.string(), "-q"});
    if (r.exit_code == 0) {
      break;
    }
    std::filesystem::remove_all(results);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return r;
}

HostedFixture::HostedFixture(const std::vector<std::pair<std::string, std::string>>& env,
                             const fs::path& log) {
  const int port = process::find_free_loopback_port();
  url_ = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  process::SpawnSpec spec;
  spec.argv = {KVBENCH_HOSTED_FIXTURE, std::to_string(port)};
  spec.env_set = env;
  spec.log_path = log;
  child_ = process::ChildProcess::spawn(spec);
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [k, v] : env) {
    if (k == "HOSTED_FIXTURE_KEY") {
      headers.emplace_back("Authorization", "Bearer " + v);
    }
  }
  if (!answers_soon(url_ + "/models", headers)) {
    ADD_FAILURE() << "the hosted-API fixture did not answer at " << url_;
  }
}

}  // namespace kvbench::itest
