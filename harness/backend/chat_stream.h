#pragma once
// What the OpenAI- and Anthropic-style stream decoders share: SSE framing, the first event's
// arrival, content and reasoning tokens traced apart, the call ending at the first error event,
// and refused calls (HTTP 429, 503, 529) said as such. A kind's decoder reads its own events in
// on_event() and says what the server reported in server_timing().

#include <string>
#include <string_view>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/http/sse.h"
#include "harness/http/transport.h"

namespace kvbench::backend {

// The message of a refused call (HTTP 429, 503 or 529): "refused: HTTP 429 (...), Retry-After:
// 2; not retried" (the Retry-After part only when the server sent one). Pure.
std::string refused_message(long http_status, const std::string& server_error,
                            const std::string& retry_after = {});

class ChatStream : public StreamDecoder {
 public:
  // `missing_end` is the message of a stream that ended without its last event.
  explicit ChatStream(std::string missing_end) : missing_end_(std::move(missing_end)) {}
  bool feed(std::string_view chunk, Nanos arrival) final;
  CallResult finish(const http::Result& res) final;
  const CallTrace& trace() const final { return result_.trace; }

 protected:
  // One event that arrived while the call still runs (none after an error).
  virtual void on_event(const http::SseEventView& sse) = 0;
  // The server's figures, once the stream ended.
  virtual ServerTiming server_timing() const = 0;

  void content(int tokens, Nanos arrival);
  // Generated text as it arrives (a conversation's next turn sends it back).
  void text(std::string_view piece) { result_.text += piece; }
  void reasoning(int tokens, Nanos arrival);
  void error(std::string message) { stream_error_ = std::move(message); }
  void end_seen() { end_seen_ = true; }

 private:
  void dispatch(const http::SseEventView& sse);

  http::SseFramer framer_;
  http::SseFramer::EventFn on_event_ = [this](const http::SseEventView& e) { dispatch(e); };
  CallResult result_;
  bool end_seen_ = false;
  std::string stream_error_;
  std::string missing_end_;
};

// The token ids llama-server reads for `text` sent as one user message to its chat endpoints:
// /apply-template, then /tokenize at `root`. Throws kvbench::Error.
std::vector<int> templated_ids(http::Transport& transport, const std::string& root,
                               const std::string& api_key, std::string_view text);

}  // namespace kvbench::backend
