#pragma once
// OpenAI-compatible servers (vLLM, SGLang, LM Studio, llama-server's /v1, hosted APIs): POST
// /v1/chat/completions or /v1/completions streamed as SSE with stream_options.include_usage.
// Request building and chunk decoding are pure; OpenAiBackend does the I/O through a Transport.
//
// A chunk's first content token is the TTFT: the role-only first delta ({"role":"assistant"},
// content null or empty) and empty chunks are not tokens. Reasoning deltas (reasoning_content or
// reasoning) are timed apart. The usage chunk (choices empty) carries prompt, completion and
// cached tokens; llama-server adds its own "timings" there.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/backend.h"
#include "harness/backend/chat_stream.h"
#include "harness/backend/ollama.h"
#include "harness/http/sse.h"
#include "harness/http/transport.h"

namespace kvbench::backend {

enum class OpenAiEndpoint { chat, completions };

// The path under the base URL: "/chat/completions" or "/completions".
std::string_view endpoint_path(OpenAiEndpoint e);

// What an OpenAI-compatible server is and how to reach it.
struct OpenAiTarget {
  std::string base_url;  // up to and including the version, e.g. "http://127.0.0.1:8000/v1"
  std::string model;     // sent as "model"
  std::string api_key;   // sent as a bearer token; never recorded
  OpenAiEndpoint endpoint = OpenAiEndpoint::chat;
  // The server is llama-server: calls carry its extensions (id_slot, cache_prompt, ignore_eos),
  // and its /apply-template and /tokenize (beside /v1, at the root) give the token ids read.
  bool llama_server = false;
  // The server's root has vLLM's (or SGLang's) POST /tokenize: {"model", "messages",
  // "add_generation_prompt"} for chat, {"model", "prompt"} for completions, answered with
  // {"tokens": [ids], "count": n}; then the token ids read are known without llama-server.
  bool tokenize_endpoint = false;
};

// The root of a base URL: "http://h:8000/v1" -> "http://h:8000". A base without a trailing
// "/v1" is its own root.
std::string root_of(std::string_view base_url);

// The request body: streamed with usage, greedy, `max_tokens` at most.
nlohmann::json openai_body(const OpenAiTarget& target, const CompletionSpec& spec);

// One decoded SSE event of an OpenAI-compatible stream.
struct OpenAiEvent {
  enum class Type { chunk, usage, done, error, ignored };
  Type type = Type::ignored;
  int content = 0;         // content tokens this chunk carries (1 for a non-empty delta or text)
  int reasoning = 0;       // reasoning tokens (1 for a non-empty reasoning delta)
  std::string text;        // the content text this chunk carries
  bool finished = false;   // a choice carried a finish_reason
  nlohmann::json usage;    // the usage object, when the chunk has one that is not null
  nlohmann::json timings;  // llama-server's timings, when present
  std::string error;
};

// Decodes one event. "[DONE]" is done; a data object with "error" (or an "error" event) is an
// error whose message is never empty; a chunk with a usage object is usage (it may carry
// content too); malformed JSON is an error naming it. Never throws.
OpenAiEvent decode_openai_event(std::string_view event_name, std::string_view data);

// The server's figures of a call from its usage (prompt_tokens, completion_tokens,
// prompt_tokens_details.cached_tokens) and, where present, llama-server's timings, which win for
// what they report. `raw` keeps both as reported ({"usage": .., "timings": ..}).
ServerTiming openai_server_timing(const nlohmann::json& usage, const nlohmann::json& timings);

// One OpenAI-compatible stream decoded as it arrives; "stream_error" when neither a usage chunk
// nor "[DONE]" arrived.
class OpenAiStream final : public ChatStream {
 public:
  OpenAiStream() : ChatStream("the stream ended without a usage chunk or [DONE]") {}

 private:
  void on_event(const http::SseEventView& sse) override;
  ServerTiming server_timing() const override { return openai_server_timing(usage_, timings_); }

  nlohmann::json usage_;
  nlohmann::json timings_;
};

// The body of a vLLM-style POST <root>/tokenize for `text` as `target` sends it: the chat
// template applied (one user message, the generation prompt added) or the plain prompt. Pure.
nlohmann::json vllm_tokenize_body(const OpenAiTarget& target, std::string_view text);

// The same for a conversation: its messages with the generation prompt added. Pure.
nlohmann::json vllm_chat_tokenize_body(const OpenAiTarget& target,
                                       const std::vector<ChatMessage>& messages);

// The token ids of a vLLM-style /tokenize answer; nullopt when it has no array of integer
// "tokens" (or its "count" disagrees). Pure.
std::optional<std::vector<int>> vllm_tokens(std::string_view body);

// llama-server's chat template applied to one user message `text` (POST <root>/apply-template):
// the prompt its /v1/chat/completions reads, before tokenizing. Throws kvbench::Error.
std::string apply_chat_template(http::Transport& transport, const std::string& root,
                                const std::string& api_key, std::string_view text);

class OpenAiBackend final : public Backend {
 public:
  OpenAiBackend(http::Transport& transport, OpenAiTarget target);

  std::string_view name() const override { return "openai"; }
  // llama-server or a /tokenize endpoint: the templated prompt's ids counted; otherwise the
  // calibrated estimate (throws kvbench::Error before calibrate() succeeded).
  int count_tokens(std::string_view text) override;
  // llama-server: /apply-template (chat) then /tokenize; a vLLM-style /tokenize; otherwise
  // empty. Throws kvbench::Error when the server does not answer with token ids.
  std::vector<int> tokenize(std::string_view text) override;
  CallResult complete(const CompletionSpec& spec) override;
  http::Request stream_request(const CompletionSpec& spec) const override;
  std::unique_ptr<StreamDecoder> open_stream(const CompletionSpec& spec) override;
  Capabilities capabilities() const override {
    return {.token_ids = target_.llama_server || target_.tokenize_endpoint,
            .slot_pinning = target_.llama_server,
            .queue_in_durations = false,
            .reuse_switch = target_.llama_server,
            .prompt_ids = target_.endpoint == OpenAiEndpoint::completions};
  }
  // llama-server: /apply-template and /tokenize; a vLLM-style /tokenize of the messages (ids
  // only); otherwise nothing (the server applies its template unseen). Throws kvbench::Error on
  // the completions endpoint, which takes no messages.
  RenderedChat render_chat(const std::vector<ChatMessage>& messages) override;
  // GET /models, and llama-server's /props where it is one.
  nlohmann::json describe() override;

  // Sends each probe (one token generated) and fits prompt_tokens against bytes. Throws
  // kvbench::Error naming the server's answer when a probe fails or reports no usage.
  const TokenCalibration& calibrate(const std::vector<std::string>& probe_texts);
  const std::optional<TokenCalibration>& calibration() const { return calibration_; }
  void set_calibration(TokenCalibration c) { calibration_ = std::move(c); }
  const OpenAiTarget& target() const { return target_; }

 private:
  http::Request request(std::string method, const std::string& url, std::string body) const;
  std::vector<int> vllm_tokenize(const nlohmann::json& body);

  http::Transport& transport_;
  OpenAiTarget target_;
  std::optional<TokenCalibration> calibration_;
};

}  // namespace kvbench::backend
