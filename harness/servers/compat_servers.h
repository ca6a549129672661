#pragma once
// OpenAI- and Anthropic-compatible servers. The call backend of every kind a llama-server serves
// (its native API, /v1/chat/completions or /v1/completions, /v1/messages), so a managed
// llama-server runs each of them; and the Servers of an attached OpenAI- or Anthropic-compatible
// server (vLLM, SGLang, LM Studio, a hosted API, or a llama-server started elsewhere): its
// /models answered with the key, llama-server recognised by /props at the root (then token ids
// and slots are known), else vLLM's /tokenize used where the root has it (token ids known),
// otherwise prompt tokens estimated from a calibration (OpenAI) or counted by
// /messages/count_tokens (Anthropic).

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/backend/ollama.h"
#include "harness/http/transport.h"
#include "harness/run/servers.h"
#include "harness/scenario/scenario.h"

namespace kvbench::servers {

// The backend a block's calls go through for `spec`'s kind. `url` is the server's root for a
// managed llama-server and spec.url for an attached one; `llama_server` says whether the server
// is one (its extensions and tokenizer are used), `tokenize_endpoint` whether an OpenAI-compatible
// server has vLLM's /tokenize.
std::unique_ptr<backend::Backend> make_call_backend(
    const scenario::ServerSpec& spec, http::Transport& transport, const std::string& url,
    const std::string& api_key, bool managed, bool llama_server, bool tokenize_endpoint = false);

// Whether the OpenAI-compatible server at `base_url` tokenizes as vLLM and SGLang do (POST
// <root>/tokenize answers a probe for `endpoint` with token ids).
bool has_tokenize_endpoint(http::Transport& transport, const std::string& base_url,
                           const scenario::ServerSpec& spec, const std::string& api_key);

// The headers that carry `api_key` for `kind`: a bearer token, or Anthropic's x-api-key with its
// anthropic-version.
std::vector<std::pair<std::string, std::string>> api_headers(scenario::ServerKind kind,
                                                             const std::string& api_key);

// Whether GET <root>/props answers as llama-server does (default_generation_settings).
bool is_llama_server(http::Transport& transport, const std::string& root,
                     const std::string& api_key);

class CompatServers final : public run::Servers {
 public:
  CompatServers(const scenario::Scenario& s, http::Transport& transport, std::string run_id)
      : s_(s), transport_(transport), run_id_(std::move(run_id)) {}

  // The key read, /models answered, llama-server recognised or not. Throws InputError for an
  // unset key variable or a refused key, Error for a server that does not answer.
  run::ServersFound prepare() override;
  // The backend for the block; calibrated once per run where the server has no tokenizer.
  std::unique_ptr<run::BlockServer> open(const plan::Block& block,
                                         const std::filesystem::path& run_dir,
                                         results::BlockInfo& info) override;

 private:
  const scenario::Scenario& s_;
  http::Transport& transport_;
  std::string run_id_;
  std::string api_key_;
  bool llama_server_ = false;
  bool tokenize_endpoint_ = false;
  std::optional<backend::TokenCalibration> calibration_;
};

}  // namespace kvbench::servers
