#pragma once
// The one interface every server kind implements: count tokens, stream one completion (whole, or
// as a request and a decoder for a caller that drives many transfers at once), say what it can
// report, describe itself. Adding a server kind is one new implementation of Backend.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/http/transport.h"

namespace kvbench::backend {

// One message of a conversation, as chat APIs take it: role "system", "user" or "assistant".
struct ChatMessage {
  std::string role;
  std::string content;
  bool operator==(const ChatMessage&) const = default;
};

// Told of each token event of a streamed call as it is decoded: when it arrived and how many
// generated tokens it carried. Returning false ends the stream there: the transfer stops (the
// server drops the request) and the call counts as answered with what it had generated
// (CallResult::ended).
using TokenWatch = std::function<bool(Nanos arrival, int tokens)>;

struct CompletionSpec {
  // The text the server reads. A conversation turn (messages not empty) holds here the messages as
  // the server's chat template renders them (Backend::render_chat), for kinds that send text.
  std::string prompt;
  // Token ids sent as the prompt instead of `prompt` (a trace's requests), by kinds whose
  // completion endpoint takes them (llama-server's /completion, an OpenAI-style /v1/completions).
  std::vector<int> prompt_ids;
  // A conversation turn: the whole history and the new user message, sent as messages by kinds
  // with a chat endpoint. Empty for a single prompt.
  std::vector<ChatMessage> messages;
  int max_tokens = 32;
  std::uint64_t seed = 0;
  bool cache_prompt = true;
  std::chrono::milliseconds timeout{0};  // 0 = none
  int slot = 0;                          // llama-server: the id_slot the call is pinned to
  // Where given, told of each token event as it arrives (a workload that watches its streams,
  // and ends one when it has what it needs); called on the thread that sends.
  TokenWatch watch;
};

// What one call produced. Server faults are data: outcome and error say what went wrong.
struct CallResult {
  CallTrace trace;
  ServerTiming server;
  Outcome outcome = Outcome::ok;
  std::optional<long> http_status;
  std::string error;
  // The generated text as streamed (a conversation's next turn sends it back), and the generated
  // token ids where the stream carries them (llama-server's /completion with return_tokens).
  std::string text;
  std::vector<int> ids;
  // The spec's watch ended the stream: outcome ok, the tokens up to then, no final event (so no
  // server figures).
  bool ended = false;
};

// A conversation as the server will read it: its chat template applied (text, where the kind
// sends text) and the token ids (empty where the kind has no tokenizer endpoint).
struct RenderedChat {
  std::string text;
  std::vector<int> ids;
};

// What a server kind can do and report; the runner asks these instead of the kind's name.
struct Capabilities {
  // tokenize() gives the ids the server reads, so a call's prompt reuse can be predicted.
  bool token_ids = false;
  // A call can be pinned to a server slot (CompletionSpec::slot): stream k always reads slot k,
  // and what each slot holds predicts the reuse of its next call.
  bool slot_pinning = false;
  // The server's own durations of a call include its wait for a free slot, so a concurrent
  // block's queueing is read from them (load::server_queue).
  bool queue_in_durations = false;
  // The call's cache_prompt switch is honoured: false makes the server read the whole prompt.
  bool reuse_switch = false;
  // A call's prompt can be sent as token ids (CompletionSpec::prompt_ids), so it holds exactly
  // the tokens asked for; otherwise it is sent as text.
  bool prompt_ids = false;
};

// One streamed call's body, decoded as it arrives: a fresh decoder per call.
class StreamDecoder {
 public:
  StreamDecoder() = default;
  virtual ~StreamDecoder() = default;
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;
  // One body chunk and the time it arrived; false: the stream carried an error, stop the call.
  virtual bool feed(std::string_view chunk, Nanos arrival) = 0;
  // The end of the transfer: the call's result, its outcome and times from `res`.
  virtual CallResult finish(const http::Result& res) = 0;
  // The token events decoded so far (CallTrace::token_arrivals and token_counts).
  virtual const CallTrace& trace() const = 0;
};

// A stream decoded with its spec's watch told of each token event (backend.h: TokenWatch): what
// both drivers feed a call's body through.
class WatchedStream {
 public:
  WatchedStream(std::unique_ptr<StreamDecoder> decoder, TokenWatch watch)
      : decoder_(std::move(decoder)), watch_(std::move(watch)) {}
  // One body chunk; false: stop the transfer (an error in the stream, or the watch ended it).
  bool feed(std::string_view chunk, Nanos arrival);
  // The call's result; a stream the watch ended is answered (outcome ok, `ended`).
  CallResult finish(const http::Result& res);

 private:
  std::unique_ptr<StreamDecoder> decoder_;
  TokenWatch watch_;
  std::size_t told_ = 0;  // token events the watch was told of
  bool ended_ = false;
};

class Backend {
 public:
  Backend() = default;
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string_view name() const = 0;
  // Tokens the server will count for `text` sent as a prompt. Throws kvbench::Error when the
  // server cannot answer (a setup failure, not a measurement).
  virtual int count_tokens(std::string_view text) = 0;
  // The token ids the server will read for `text` (BOS included); empty when the server kind
  // has no tokenizer endpoint. Throws kvbench::Error like count_tokens.
  virtual std::vector<int> tokenize(std::string_view text) = 0;
  // Streams one completion. Never throws for a server fault.
  virtual CallResult complete(const CompletionSpec& spec) = 0;
  // The streamed request complete() sends, and a decoder for its body, for a caller that drives
  // the transfer itself (many at once). Pure but for the decoder's state.
  virtual http::Request stream_request(const CompletionSpec& spec) const = 0;
  virtual std::unique_ptr<StreamDecoder> open_stream(const CompletionSpec& spec) = 0;
  virtual Capabilities capabilities() const = 0;
  // A conversation as the server reads it: its chat template applied to `messages` with the
  // generation prompt added. Kinds whose chat endpoint applies the template unseen (Ollama, hosted
  // APIs) give empty text and ids. Throws kvbench::Error when the server does not answer.
  virtual RenderedChat render_chat(const std::vector<ChatMessage>& messages) = 0;
  // What the server reports about itself (llama-server: /props), for run.json.
  virtual nlohmann::json describe() = 0;
};

// The header that carries `api_key` as a bearer token (llama-server, OpenAI-compatible servers);
// none when the key is empty.
std::vector<std::pair<std::string, std::string>> bearer_header(const std::string& api_key);

// One call through `transport`: be.stream_request(spec) streamed into be.open_stream(spec), its
// watch told of each token event.
CallResult stream_call(Backend& be, http::Transport& transport, const CompletionSpec& spec);

}  // namespace kvbench::backend
