// libFuzzer target for llama-server's stream decoding. The input is used twice: split at its
// first '\n' into an event name and data for decode_completion_event, and whole as the body of
// a /completion stream that LlamaServerBackend::complete reads through a scripted transport in
// chunks derived from the input; and as an HTTP error body for error_message_from_body. Nothing
// may throw; every message must be recordable as JSON. decode_completion_event must give what
// decode_completion_event_dom gives, for the split input, the whole input as data, and every
// event SseFramer cuts from the input.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/llama_server.h"
#include "harness/http/sse.h"
#include "harness/http/transport.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/support/scripted_transport.h"

namespace {

using kvbench::backend::CompletionEvent;
using kvbench::fuzz::check;
using kvbench::fuzz::recordable;

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// decode_completion_event, checked against the whole-document decoder.
CompletionEvent decode_checked(std::string_view name, std::string_view data) {
  CompletionEvent ev = kvbench::backend::decode_completion_event(name, data);
  const CompletionEvent dom = kvbench::backend::decode_completion_event_dom(name, data);
  check(ev.type == dom.type && ev.tokens == dom.tokens &&
            ev.tokens_predicted == dom.tokens_predicted && ev.error == dom.error &&
            dump(ev.timings) == dump(dom.timings),
        "decode_completion_event gives what a whole document gives");
  return ev;
}

void check_framed_events(std::string_view text) {
  kvbench::http::SseFramer framer;
  std::vector<kvbench::http::SseEvent> events;
  framer.feed(text, kvbench::Nanos{1}, events);
  framer.finish(events);
  for (const auto& e : events) {
    static_cast<void>(decode_checked(e.event, e.data));
  }
}

void check_event(std::string_view text) {
  const std::size_t nl = text.find('\n');
  const std::string_view name = nl == std::string_view::npos ? "message" : text.substr(0, nl);
  const std::string_view data = nl == std::string_view::npos ? text : text.substr(nl + 1);
  const CompletionEvent ev = decode_checked(name, data);
  check(ev.tokens >= 0, "an event carries no negative token count");
  check(!ev.tokens_predicted || *ev.tokens_predicted >= 0, "tokens_predicted is never negative");
  check((ev.type == CompletionEvent::Type::error) == !ev.error.empty(),
        "an error event, and only an error event, has a message");
  check(recordable(ev.error), "an error message is valid UTF-8");
  check(ev.type == CompletionEvent::Type::final || ev.timings.is_null(),
        "only the final event has timings");
  if (data == "[DONE]") {
    check(ev.type == CompletionEvent::Type::ignored, "[DONE] is ignored");
  }
  static_cast<void>(kvbench::backend::parse_timings(ev.timings));
}

void check_stream(std::string_view text) {
  kvbench::test_support::ScriptedTransport transport;
  for (const std::string_view chunk :
       kvbench::fuzz::random_chunks(text, kvbench::fuzz::hash(text, 3))) {
    transport.chunks.emplace_back(chunk);
  }
  transport.start = kvbench::Nanos{1};
  transport.gap = kvbench::Nanos{1};
  kvbench::backend::LlamaServerBackend backend(transport, "http://127.0.0.1:1", "");
  const kvbench::backend::CallResult r = backend.complete({});
  check(r.trace.token_arrivals.size() == r.trace.token_counts.size(), "one count per arrival");
  for (const int n : r.trace.token_counts) {
    check(n > 0, "only events with tokens are traced");
  }
  check((r.outcome == kvbench::Outcome::ok) == r.error.empty(),
        "a failed call, and only one, has a message");
  check(recordable(r.error), "a call's error message is valid UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kvbench::fuzz::as_text(data, size);
  check_event(text);
  static_cast<void>(decode_checked("message", text));
  check_framed_events(text);
  check_stream(text);
  check(recordable(kvbench::http::error_message_from_body(500, text)),
        "an HTTP error body gives a valid UTF-8 message");
  return 0;
}
