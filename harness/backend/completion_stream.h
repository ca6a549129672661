#pragma once
// One /completion stream of llama-server, decoded as its chunks arrive: SSE framing, token events
// with their arrival times, the final event's timings, and how the call ended. Pure: chunks and
// a transport Result in, a CallResult out.

#include <string>
#include <string_view>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/http/sse.h"
#include "harness/http/transport.h"

namespace kvbench::backend {

// How a streamed call ended, whatever the server kind: `r` (its trace and server figures as the
// decoder filled them) gets the transport's times and status, and its outcome: "server_error"
// with `stream_error` when the stream carried an error, else the transport's outcome, else
// "stream_error" with `missing_final` when the stream ended without its final event.
CallResult streamed_result(CallResult r, const http::Result& res, const std::string& stream_error,
                           bool final_seen, std::string_view missing_final);

class CompletionStream {
 public:
  // keep_text: the generated text and token ids are kept in the result (a conversation turn).
  explicit CompletionStream(bool keep_text = false) : keep_text_(keep_text) {}
  // Not copied or moved: the framer's callback points at this object.
  CompletionStream(const CompletionStream&) = delete;
  CompletionStream& operator=(const CompletionStream&) = delete;

  // Frames and decodes one body chunk that arrived at `arrival`. Returns false once the server
  // sent an error event: the call should stop.
  bool feed(std::string_view chunk, Nanos arrival);
  // The token events decoded so far.
  const CallTrace& trace() const { return result_.trace; }

  // Ends the stream with the transport's result and returns the call's record: the trace (sent,
  // first byte, done, token arrivals), the server's timings, and the outcome ("server_error" for
  // an error event, the transport's outcome, or "stream_error" without a final event).
  CallResult finish(const http::Result& res);

 private:
  void on_event(const http::SseEventView& sse);
  void keep_text(std::string_view data);

  http::SseFramer framer_;
  http::SseFramer::EventFn on_event_ = [this](const http::SseEventView& e) { on_event(e); };
  CallResult result_;
  bool final_seen_ = false;
  std::string stream_error_;
  int predicted_so_far_ = 0;
  bool keep_text_ = false;
};

}  // namespace kvbench::backend
