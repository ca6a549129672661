#pragma once
// llama-server's native API: POST /completion streamed as SSE, POST /tokenize, GET /health and
// GET /props. Request building and event decoding are pure; LlamaServerBackend does the I/O
// through a Transport, whose Clock stamps every arrival.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/http/transport.h"

namespace kvbench::backend {

// The /completion request body: streamed, greedy, a fixed number of tokens (ignore_eos).
nlohmann::json completion_body(const CompletionSpec& spec);

// One decoded SSE event of a /completion stream.
struct CompletionEvent {
  enum class Type { partial, final, error, ignored };
  Type type = Type::ignored;
  int tokens = 0;  // generated tokens this event carries, by its "tokens" array or content
  std::optional<int> tokens_predicted;  // the server's running count, where it reports one
  std::string error;
  nlohmann::json timings;  // final event only
};

// Decodes one SSE event (its name and data). A partial event carries tokens when its "tokens"
// array or "content" is non-empty (the running "tokens_predicted" count is the better measure:
// the server holds back bytes of an incomplete UTF-8 character, so one event can carry several
// tokens); the event with "stop": true is final; an "error" event or a
// data object with an "error" member is an error; "[DONE]" and anything else is ignored.
// Malformed JSON is an error event whose message says so. Never throws; an error's message is
// never empty and always valid UTF-8; tokens_predicted is set only for an integer in 0..INT_MAX.
CompletionEvent decode_completion_event(std::string_view event_name, std::string_view data);

// The same decoding through a whole nlohmann::json document per event. decode_completion_event
// reads a token event's few members without one and uses this for everything else (final and
// error events, malformed data); both give the same result for every input.
CompletionEvent decode_completion_event_dom(std::string_view event_name, std::string_view data);

// Normalises llama-server's "timings" object; `raw` keeps it as reported.
ServerTiming parse_timings(const nlohmann::json& timings);

// Messages as chat endpoints take them: [{"role", "content"}, ...].
nlohmann::json chat_messages_json(const std::vector<ChatMessage>& messages);

// llama-server's chat template applied to `messages` with the generation prompt (POST
// <root>/apply-template): the text its chat endpoints read. Throws kvbench::Error.
std::string apply_template(http::Transport& transport, const std::string& root,
                           const std::string& api_key, const std::vector<ChatMessage>& messages);

class LlamaServerBackend final : public Backend {
 public:
  // base_url like "http://127.0.0.1:8080"; api_key empty for none (never recorded).
  LlamaServerBackend(http::Transport& transport, std::string base_url, std::string api_key);

  std::string_view name() const override { return "llama-server"; }
  int count_tokens(std::string_view text) override;
  std::vector<int> tokenize(std::string_view text) override;
  CallResult complete(const CompletionSpec& spec) override;
  nlohmann::json describe() override;
  // POST /completion, pinned to spec.slot, decoded by a CompletionStream.
  http::Request stream_request(const CompletionSpec& spec) const override {
    return completion_request(spec);
  }
  std::unique_ptr<StreamDecoder> open_stream(const CompletionSpec& spec) override;
  // Token ids from /tokenize, slots pinned by id_slot; cache_n reported; cache_prompt honoured;
  // a prompt of token ids taken.
  Capabilities capabilities() const override {
    return {.token_ids = true,
            .slot_pinning = true,
            .queue_in_durations = false,
            .reuse_switch = true,
            .prompt_ids = true};
  }
  // POST /apply-template, then /tokenize of its prompt.
  RenderedChat render_chat(const std::vector<ChatMessage>& messages) override;

  // The POST /completion request complete() sends.
  http::Request completion_request(const CompletionSpec& spec) const;

  // GET /health answered 200.
  bool healthy();
  const std::string& base_url() const { return base_url_; }

 private:
  http::Request request(std::string method, std::string path, std::string body) const;

  http::Transport& transport_;
  std::string base_url_;
  std::string api_key_;
};

}  // namespace kvbench::backend
