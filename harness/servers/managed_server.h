#pragma once
// A llama-server that kvbench starts for one block of calls, on a free loopback port, from an
// argument vector, and stops at the end of the block (or when kvbench is interrupted).

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/http/transport.h"
#include "harness/process/child.h"
#include "harness/results/block_facts.h"

namespace kvbench::servers {

struct LlamaServerLaunch {
  std::string binary;  // llama-server executable (or its launcher)
  std::string model_path;
  int num_ctx = 4096;
  std::string cache_type = "f16";
  std::string flash_attn = "auto";  // on | off | auto; a quantized cache turns auto into on
  int threads = 0;                  // 0: the server's default
  int parallel = 1;
  std::vector<std::string> extra_args;  // appended verbatim, one argument each
  std::filesystem::path log_path;
  std::string api_key;  // handed over in the environment, never on the command line
  int gpu_layers = -1;  // -ngl; -1: the server's default
  // --batch-size and --ubatch-size; absent: the server's defaults (it caps the micro-batch at
  // the batch).
  std::optional<int> batch_size = std::nullopt;
  std::optional<int> ubatch_size = std::nullopt;
};

// The argument vector for `launch` on `port`. Pure. Every managed llama-server gets
// --cache-reuse and --cache-ram as scenario/llama_defaults.h states them, before server.args.

std::vector<std::string> llama_server_argv(const LlamaServerLaunch& launch, int port);

// The prompt-cache settings an argv gives a llama-server: {"cache_reuse": N, "cache_ram_mib": M}
// (the last occurrence of each flag; null when absent).
results::PromptCacheSettings prompt_cache_settings(const std::vector<std::string>& argv);

// Any server process as ManagedServer starts it (llama-server, ollama serve).
struct ProcessLaunch {
  std::string name;  // for messages: "llama-server", "ollama serve"
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env_set;
  std::vector<std::string> env_unset;
  std::filesystem::path log_path;
  std::string url;         // where it listens, "http://127.0.0.1:<port>"
  std::string ready_path;  // GET url + ready_path answers 200 once the server is ready
};

class ManagedServer {
 public:
  // Starts the server and waits until GET /health answers 200. Throws kvbench::Error with the
  // tail of the server's log when it exits early or is not ready within `ready_timeout`.
  static std::unique_ptr<ManagedServer> start(const LlamaServerLaunch& launch,
                                              http::Transport& transport,
                                              std::chrono::seconds ready_timeout);
  // Starts any server process and waits until GET url + ready_path answers 200. Throws
  // kvbench::Error with the tail of its log when it exits early or is not ready in time.
  static std::unique_ptr<ManagedServer> start_process(const ProcessLaunch& launch,
                                                      http::Transport& transport,
                                                      std::chrono::seconds ready_timeout);
  // start_process on a free loopback port: `launch_for(port)` describes the launch. A server that
  // exits before it is ready because its port was taken in the moment between choosing it and
  // binding it (its log says so: "couldn't bind", "address already in use") is started again on
  // another port, at most kPortAttempts times in all (port_retries() says how often).
  static constexpr int kPortAttempts = 3;
  static std::unique_ptr<ManagedServer> start_on_free_port(
      const std::function<ProcessLaunch(int port)>& launch_for, http::Transport& transport,
      std::chrono::seconds ready_timeout);

  const std::string& url() const { return url_; }
  const std::vector<std::string>& argv() const { return argv_; }
  int pid() const { return child_.pid(); }
  // How often start_on_free_port started it again because its port was taken.
  int port_retries() const { return port_retries_; }
  bool running() { return child_.running(); }
  // Why it stopped, when it has ("exited with code 1", ...); empty while running.
  std::string exit_description();
  // SIGTERM, then SIGKILL after 5 s (0.25 s once kvbench is interrupted).
  void stop();

 private:
  ManagedServer(process::ChildProcess child, std::string url, std::vector<std::string> argv)
      : child_(std::move(child)), url_(std::move(url)), argv_(std::move(argv)) {}

  process::ChildProcess child_;
  int port_retries_ = 0;
  std::string url_;
  std::vector<std::string> argv_;
};

// The last `max_lines` lines of a log file (for error messages).
std::string log_tail(const std::filesystem::path& path, std::size_t max_lines);

}  // namespace kvbench::servers
