#pragma once
// Running a scenario on Ollama: the setup checks before anything is written, and per block the
// server (a managed `ollama serve` with the block's cache type and its concurrency level as
// OLLAMA_NUM_PARALLEL, or the attached one), an explicit load with the block's num_ctx (so load
// time stays out of TTFT), /api/ps memory and the token calibration that stands in for a
// tokenize endpoint.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/ollama.h"
#include "harness/http/transport.h"
#include "harness/plan/plan.h"
#include "harness/run/servers.h"
#include "harness/scenario/scenario.h"
#include "harness/servers/managed_server.h"

namespace kvbench::servers {

// Finds the ollama executable: `explicit_path` if given, else $KVBENCH_OLLAMA, else `ollama` on
// PATH. Throws InputError naming what was tried.
std::string find_ollama(const std::string& explicit_path);

// Texts of the calibration probes: each starts with its own unique line, then filler of growing
// length, none longer than `max_bytes`. Pure.
std::vector<std::string> calibration_probes(std::string_view run_id, std::uint64_t seed,
                                            std::size_t max_bytes);

// The message for a model the server does not have: names the URL and `ollama pull <model>`.
std::string missing_model_message(const std::string& model, const std::string& url,
                                  const std::string& server_error);

class OllamaServers final : public run::Servers {
 public:
  OllamaServers(const scenario::Scenario& s, http::Transport& transport, std::string run_id,
                std::chrono::seconds ready_timeout);
  ~OllamaServers() override;

  // Checks that the server answers and has the model, and fills run.json's "server" and "model".
  // Throws InputError for a missing model (naming `ollama pull`), binary or API key variable,
  // Error for a server that does not answer (naming its URL). Warnings go to stderr and into
  // server["warnings"].
  run::ServersFound prepare() override;

  // The block's server (open_block; on failure close_block, then the Error); closing it is
  // close_block. A managed `ollama serve` that died is not restarted: the rest of its block
  // fails call by call.
  std::unique_ptr<run::BlockServer> open(const plan::Block& block,
                                         const std::filesystem::path& run_dir,
                                         results::BlockInfo& info) override;

  // Starts or reaches the server for `block`, loads the model with the block's num_ctx, reads
  // /api/ps and calibrates (once per run); fills `info`. A managed server gets
  // OLLAMA_NUM_PARALLEL = the block's slots ("num_parallel"); with concurrency, an attached one
  // records "num_parallel": null and why, and every concurrent block records its per-slot
  // context ("slot_ctx", /api/ps context_length) and that no reuse is predicted. Throws Error
  // when the server does not start, the load fails or the calibration fails.
  backend::OllamaBackend& open_block(const plan::Block& block, const std::filesystem::path& run_dir,
                                     results::BlockInfo& info);

  // Records /api/ps (and a managed server's memory) at the end and stops a managed server.
  void close_block(results::BlockInfo& info);

  // The answers experiment's control for `block`, after close_block: a fresh `ollama serve` of
  // the block's configuration where managed (its log server-block<N>-answers.log), else the
  // attached server's model unloaded so a fresh runner loads it; each prompt answered as text.
  std::vector<backend::Answer> answers_on_second_start(const plan::Block& block,
                                                       const std::filesystem::path& run_dir,
                                                       const std::vector<std::string>& prompts,
                                                       const backend::AnswerSpec& spec);

 private:
  std::unique_ptr<servers::ManagedServer> start_server(const std::string& cache_type,
                                                       int num_parallel,
                                                       const std::filesystem::path& log_path,
                                                       results::BlockInfo& info);
  void record_concurrency(results::BlockInfo& info) const;
  void check(nlohmann::json& server, nlohmann::json& model);
  void check_server(backend::OllamaBackend& be, nlohmann::json& server, nlohmann::json& model);
  results::ApiPsMemory record_ps(backend::OllamaBackend& be);
  // What a block's requests ask of Ollama: the model, its num_ctx, layers and batch.
  backend::OllamaTarget target_of(const plan::Block& block) const;

  const scenario::Scenario& s_;
  http::Transport& transport_;
  std::string run_id_;
  std::chrono::seconds ready_timeout_;
  std::string binary_;
  std::unique_ptr<servers::ManagedServer> managed_;
  std::unique_ptr<backend::OllamaBackend> backend_;
  std::optional<backend::TokenCalibration> calibration_;
};

}  // namespace kvbench::servers
