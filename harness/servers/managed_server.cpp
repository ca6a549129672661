#include "harness/servers/managed_server.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/ggml_types.h"
#include "harness/process/ports.h"
#include "harness/scenario/llama_defaults.h"
#include "harness/scenario/scenario.h"

namespace kvbench::servers {

namespace llama = scenario::llama;

std::vector<std::string> llama_server_argv(const LlamaServerLaunch& l, int port) {
  std::string fa = l.flash_attn;
  const auto halves = scenario::cache_halves(l.cache_type);  // "q8_0", or K and V apart
  if (fa == "auto" &&
      (gguf::quantized_cache_type(halves.k) || gguf::quantized_cache_type(halves.v))) {
    fa = "on";
  }
  std::vector<std::string> argv = {
      l.binary, "-m", l.model_path, "-c", std::to_string(l.num_ctx), "-np",
      std::to_string(l.parallel), "-ctk", halves.k, "-ctv", halves.v, "-fa", fa, "--host",
      "127.0.0.1", "--port", std::to_string(port), "--no-webui", "--metrics",
      // A verbose log: the KV cache's memory is read from it (kv/server_log.h).
      "-lv", "4"};
  // The prompt-cache settings kvbench states rather than assumes (llama_defaults.h).
  argv.insert(argv.end(),
              {std::string(llama::kCacheReuseFlag.name), std::to_string(llama::kCacheReuse),
               std::string(llama::kCacheRamFlag.name), std::to_string(llama::kCacheRamMib)});
  if (l.threads > 0) {
    argv.insert(argv.end(), {"-t", std::to_string(l.threads)});
  }
  if (l.gpu_layers >= 0) {
    argv.insert(argv.end(), {"-ngl", std::to_string(l.gpu_layers)});
  }
  if (l.batch_size) {
    argv.insert(argv.end(), {"--batch-size", std::to_string(*l.batch_size)});
  }
  if (l.ubatch_size) {
    argv.insert(argv.end(), {"--ubatch-size", std::to_string(*l.ubatch_size)});
  }
  argv.insert(argv.end(), l.extra_args.begin(), l.extra_args.end());
  return argv;
}

results::PromptCacheSettings prompt_cache_settings(const std::vector<std::string>& argv) {
  const auto number = [](const std::optional<std::string>& s) -> results::FlagValue {
    if (!s) {
      return std::monostate{};
    }
    try {
      return static_cast<long long>(std::stol(*s));
    } catch (const std::exception&) {
      return *s;
    }
  };
  return {number(llama::flag_value(argv, llama::kCacheReuseFlag)),
          number(llama::flag_value(argv, llama::kCacheRamFlag))};
}

std::string log_tail(const std::filesystem::path& path, std::size_t max_lines) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (lines.size() > max_lines) {
      lines.pop_front();
    }
  }
  std::string out;
  for (const auto& l : lines) {
    out += "  | " + l + "\n";
  }
  return out;
}

std::unique_ptr<ManagedServer> ManagedServer::start(const LlamaServerLaunch& launch,
                                                    http::Transport& transport,
                                                    std::chrono::seconds ready_timeout) {
  const auto launch_for = [&launch](int port) {
    ProcessLaunch p;
    p.name = "llama-server";
    p.argv = llama_server_argv(launch, port);
    p.log_path = launch.log_path;
    p.env_unset = {"LLAMA_API_KEY", "LLAMA_ARG_HOST", "LLAMA_ARG_PORT"};
    if (!launch.api_key.empty()) {
      p.env_set.emplace_back("LLAMA_API_KEY", launch.api_key);
    }
    p.url = fmt::format("http://127.0.0.1:{}", port);
    p.ready_path = "/health";
    return p;
  };
  return start_on_free_port(launch_for, transport, ready_timeout);
}

namespace {

// The server exited before it was ready because its port was taken.
class PortTaken : public Error {
 public:
  using Error::Error;
};

// What `path` holds past its first `offset` bytes: the log of this start only.
std::string log_since(const std::filesystem::path& path, std::uintmax_t offset) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool says_port_taken(const std::string& log) {
  std::string lower(log);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("couldn't bind") != std::string::npos ||
         lower.find("address already in use") != std::string::npos;
}

}  // namespace

std::unique_ptr<ManagedServer> ManagedServer::start_on_free_port(
    const std::function<ProcessLaunch(int port)>& launch_for, http::Transport& transport,
    std::chrono::seconds ready_timeout) {
  for (int attempt = 1;; ++attempt) {
    const ProcessLaunch launch = launch_for(process::find_free_loopback_port());
    try {
      auto server = start_process(launch, transport, ready_timeout);
      server->port_retries_ = attempt - 1;
      return server;
    } catch (const PortTaken&) {
      if (attempt == kPortAttempts) {
        throw;
      }
    }
  }
}

std::unique_ptr<ManagedServer> ManagedServer::start_process(const ProcessLaunch& launch,
                                                            http::Transport& transport,
                                                            std::chrono::seconds ready_timeout) {
  process::SpawnSpec spec;
  spec.argv = launch.argv;
  spec.log_path = launch.log_path;
  spec.env_unset = launch.env_unset;
  spec.env_set = launch.env_set;
  std::error_code ec;
  const std::uintmax_t log_start = std::filesystem::file_size(launch.log_path, ec);
  auto child = process::ChildProcess::spawn(spec);
  std::unique_ptr<ManagedServer> server(
      new ManagedServer(std::move(child), launch.url, launch.argv));
  http::Request health;
  health.method = "GET";
  health.url = launch.url + launch.ready_path;
  health.timeout = std::chrono::milliseconds(2000);
  health.connect_timeout = std::chrono::milliseconds(1000);
  const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!server->running()) {
      const std::string tail = log_tail(launch.log_path, 15);
      const std::string message =
          fmt::format("{} {} before it was ready; the end of its log ({}):\n{}", launch.name,
                      server->exit_description(), launch.log_path.string(), tail);
      if (says_port_taken(log_since(launch.log_path, ec ? 0 : log_start))) {
        throw PortTaken(message);
      }
      throw Error(message);
    }
    if (http::interrupted()) {
      server->stop();
      throw Error(fmt::format("interrupted while {} was starting", launch.name));
    }
    const auto res = transport.fetch(health);
    if (res.outcome == http::Outcome::ok && res.http_status == 200) {
      return server;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  server->stop();
  throw Error(fmt::format("{} was not ready within {} s; the end of its log ({}):\n{}", launch.name,
                          ready_timeout.count(), launch.log_path.string(),
                          log_tail(launch.log_path, 15)));
}

std::string ManagedServer::exit_description() {
  if (child_.running()) {
    return "";
  }
  const auto st = child_.exit_status();
  return st ? st->describe() : "stopped";
}

// A server busy with a long prompt finishes its current batch before it acts on SIGTERM; after an
// interrupt nothing more is measured from it, so it gets a quarter of a second, not five.
void ManagedServer::stop() {
  child_.stop(std::chrono::milliseconds(http::interrupted() ? 250 : 5000));
}

}  // namespace kvbench::servers
