#include "harness/backend/completion_stream.h"

#include <algorithm>
#include <string>
#include <utility>

#include "harness/backend/llama_server.h"

namespace kvbench::backend {

void CompletionStream::on_event(const http::SseEventView& sse) {
  const auto ev = decode_completion_event(sse.event, sse.data);
  if (ev.type == CompletionEvent::Type::error) {
    stream_error_ = ev.error;
    return;
  }
  int n = ev.tokens;
  if (ev.tokens_predicted) {
    n = std::max(0, *ev.tokens_predicted - predicted_so_far_);
    predicted_so_far_ = std::max(predicted_so_far_, *ev.tokens_predicted);
  }
  if (n > 0) {
    result_.trace.token_arrivals.push_back(sse.arrival);
    result_.trace.token_counts.push_back(n);
  }
  if (keep_text_) {
    keep_text(sse.data);
  }
  if (ev.type == CompletionEvent::Type::final) {
    final_seen_ = true;
    result_.server = parse_timings(ev.timings);
  }
}

void CompletionStream::keep_text(std::string_view data) {
  const auto j = nlohmann::json::parse(data, nullptr, false);
  if (!j.is_object()) {
    return;
  }
  if (const auto c = j.find("content"); c != j.end() && c->is_string()) {
    result_.text += c->get_ref<const std::string&>();
  }
  if (const auto t = j.find("tokens"); t != j.end() && t->is_array()) {
    for (const auto& id : *t) {
      if (id.is_number_integer()) {
        result_.ids.push_back(id.get<int>());
      }
    }
  }
}

bool CompletionStream::feed(std::string_view chunk, Nanos arrival) {
  framer_.feed(chunk, arrival, on_event_);
  return stream_error_.empty();
}

CallResult CompletionStream::finish(const http::Result& res) {
  framer_.finish(on_event_);
  return streamed_result(std::move(result_), res, stream_error_, final_seen_,
                         "the stream ended without a final event");
}

CallResult streamed_result(CallResult r, const http::Result& res, const std::string& stream_error,
                           bool final_seen, std::string_view missing_final) {
  r.trace.sent = res.started;
  r.trace.first_byte = res.first_byte;
  r.trace.request_out = res.request_out;
  r.trace.done = res.finished;
  if (res.http_status != 0) {
    r.http_status = res.http_status;
  }
  if (!stream_error.empty()) {
    r.outcome = Outcome::server_error;
    r.error = stream_error;
  } else if (res.outcome != http::Outcome::ok) {
    r.outcome = http::call_outcome(res.outcome);
    r.error = res.error;
  } else if (!final_seen) {
    r.outcome = Outcome::stream_error;
    r.error = std::string(missing_final);
  }
  return r;
}

}  // namespace kvbench::backend
