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

class CompletionStream {
 public:
  // Frames and decodes one body chunk that arrived at `arrival`. Returns false once the server
  // sent an error event: the call should stop.
  bool feed(std::string_view chunk, Nanos arrival);

  // Ends the stream with the transport's result and returns the call's record: the trace (sent,
  // first byte, done, token arrivals), the server's timings, and the outcome ("server_error" for
  // an error event, the transport's outcome, or "stream_error" without a final event).
  CallResult finish(const http::Result& res);

 private:
  void on_event(const http::SseEvent& sse);

  http::SseFramer framer_;
  std::vector<http::SseEvent> events_;
  CallResult result_;
  bool final_seen_ = false;
  std::string stream_error_;
  int predicted_so_far_ = 0;
};

}  // namespace kvbench::backend
