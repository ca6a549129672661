#include "harness/backend/chat_stream.h"

#include <fmt/format.h>

#include "harness/backend/completion_stream.h"
#include "harness/backend/llama_server.h"
#include "harness/backend/openai.h"

namespace kvbench::backend {

std::string refused_message(long http_status, const std::string& server_error,
                            const std::string& retry_after) {
  return fmt::format("refused: HTTP {} ({}){}; not retried", http_status,
                     server_error.empty() ? "no message" : server_error,
                     retry_after.empty() ? "" : ", Retry-After: " + retry_after);
}

void ChatStream::dispatch(const http::SseEventView& sse) {
  if (!stream_error_.empty()) {
    return;  // the call ended at the first error
  }
  if (result_.trace.first_event.count() == 0) {
    result_.trace.first_event = sse.arrival;
  }
  on_event(sse);
}

void ChatStream::content(int tokens, Nanos arrival) {
  if (tokens > 0) {
    result_.trace.token_arrivals.push_back(arrival);
    result_.trace.token_counts.push_back(tokens);
  }
}

void ChatStream::reasoning(int tokens, Nanos arrival) {
  if (tokens > 0) {
    if (result_.trace.first_reasoning.count() == 0) {
      result_.trace.first_reasoning = arrival;
    }
    result_.trace.reasoning_tokens += tokens;
  }
}

bool ChatStream::feed(std::string_view chunk, Nanos arrival) {
  framer_.feed(chunk, arrival, on_event_);
  return stream_error_.empty();
}

CallResult ChatStream::finish(const http::Result& res) {
  framer_.finish(on_event_);
  result_.server = server_timing();
  auto r = streamed_result(std::move(result_), res, stream_error_, end_seen_, missing_end_);
  if (r.http_status && (*r.http_status == 429 || *r.http_status == 503 || *r.http_status == 529)) {
    r.error = refused_message(*r.http_status, r.error, res.retry_after);
  }
  return r;
}

std::vector<int> templated_ids(http::Transport& transport, const std::string& root,
                               const std::string& api_key, std::string_view text) {
  LlamaServerBackend native(transport, root, api_key);
  return native.tokenize(apply_chat_template(transport, root, api_key, text));
}

}  // namespace kvbench::backend
