#pragma once
// Anthropic's Messages API (hosted, or llama-server's /v1/messages): POST /v1/messages streamed as
// named SSE events. message_start carries the prompt's usage (input_tokens: read afresh;
// cache_read_input_tokens: read from the cache; cache_creation_input_tokens: written to it),
// content_block_delta the tokens (text_delta; thinking_delta timed apart), message_delta the
// output count, message_stop the end; an error event (overloaded_error among them) ends the call.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/backend.h"
#include "harness/backend/chat_stream.h"
#include "harness/http/sse.h"
#include "harness/http/transport.h"

namespace kvbench::backend {

// The anthropic-version header kvbench sends.
inline constexpr std::string_view kAnthropicVersion = "2023-06-01";

// anthropic-version, and x-api-key when `api_key` is not empty.
std::vector<std::pair<std::string, std::string>> anthropic_headers(const std::string& api_key);

struct AnthropicTarget {
  std::string base_url;  // up to and including the version, e.g. "https://api.anthropic.com/v1"
  std::string model;
  std::string api_key;  // sent as x-api-key; never recorded
  // llama-server: calls carry id_slot and cache_prompt, and /apply-template + /tokenize at the
  // root give the token ids read.
  bool llama_server = false;
  // The user message carries cache_control {"type": "ephemeral"}: the prompt may be cached.
  bool breakpoint_at_end = false;
};

nlohmann::json anthropic_body(const AnthropicTarget& target, const CompletionSpec& spec);

struct AnthropicEvent {
  enum class Type { start, delta, message_delta, stop, error, ignored };
  Type type = Type::ignored;
  int content = 0;       // text tokens (1 for a non-empty text_delta)
  std::string text;      // a text_delta's text
  int reasoning = 0;     // 1 for a non-empty thinking_delta
  nlohmann::json usage;  // message_start's message.usage, or message_delta's usage
  std::string error;
};

// Decodes one event by its name (or, without one, by the data's "type"). Never throws; an
// error's message is never empty.
AnthropicEvent decode_anthropic_event(std::string_view event_name, std::string_view data);

// The server's figures from the usage of message_start and the last message_delta: cache_n is
// cache_read_input_tokens, prompt_n input_tokens + cache_creation_input_tokens, predicted_n the
// last output_tokens. raw keeps {"start_usage": .., "usage": ..}.
ServerTiming anthropic_server_timing(const nlohmann::json& start_usage,
                                     const nlohmann::json& end_usage);

// One Messages stream decoded as it arrives; "stream_error" when message_stop never arrived.
class AnthropicStream final : public ChatStream {
 public:
  AnthropicStream() : ChatStream("the stream ended without message_stop") {}

 private:
  void on_event(const http::SseEventView& sse) override;
  ServerTiming server_timing() const override {
    return anthropic_server_timing(start_usage_, end_usage_);
  }

  nlohmann::json start_usage_;
  nlohmann::json end_usage_;
};

class AnthropicBackend final : public Backend {
 public:
  AnthropicBackend(http::Transport& transport, AnthropicTarget target);

  std::string_view name() const override { return "anthropic"; }
  // llama-server: the templated prompt's ids counted; else POST /messages/count_tokens
  // (input_tokens). Throws kvbench::Error when the server cannot count.
  int count_tokens(std::string_view text) override;
  std::vector<int> tokenize(std::string_view text) override;
  CallResult complete(const CompletionSpec& spec) override;
  http::Request stream_request(const CompletionSpec& spec) const override;
  std::unique_ptr<StreamDecoder> open_stream(const CompletionSpec& spec) override;
  Capabilities capabilities() const override {
    // llama-server's /v1/messages takes id_slot but reads every prompt with its cache (a
    // cache_prompt false is not honoured there): no reuse switch.
    return {.token_ids = target_.llama_server,
            .slot_pinning = target_.llama_server,
            .queue_in_durations = false,
            .reuse_switch = false};
  }
  // llama-server: /apply-template and /tokenize (the system message as its template renders
  // it); a hosted API: nothing.
  RenderedChat render_chat(const std::vector<ChatMessage>& messages) override;
  nlohmann::json describe() override;

 private:
  http::Request request(std::string method, const std::string& url, std::string body) const;

  http::Transport& transport_;
  AnthropicTarget target_;
};

}  // namespace kvbench::backend
