#pragma once
// The HTTP seam: one request in, body bytes out with the time each chunk arrived. Server faults
// (refused connections, error statuses, broken streams, timeouts) are returned as data in a
// Result, never thrown, so one bad call cannot stop a measurement loop.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/core/clock.h"
#include "harness/core/record.h"

namespace kvbench::http {

struct Request {
  std::string method = "POST";  // "GET" sends no body; anything else sends `body`
  std::string url;
  // Sent as given. A non-empty body without a Content-Type header is sent as application/json.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds timeout{0};  // the whole call, connect included; 0 = no limit
  std::chrono::milliseconds connect_timeout{5000};  // 0 = libcurl's default (300 s)
};

// How one call ended. A call that got an HTTP error status is http_error even if its error body
// was cut short; the other values come from the transfer itself.
enum class Outcome {
  ok,             // a 2xx status and the whole body
  connect_error,  // no connection: refused, unresolvable, or the connect timed out
  timeout,        // connected, but the call outlived Request::timeout
  http_error,     // the server answered with a status outside 200..299
  stream_error,   // connected, but the response broke off or was malformed
  aborted,        // the ChunkSink asked to stop, or the process was interrupted
};

// A process-wide question every call in flight asks while it waits: when it answers true, the
// call ends at once as Outcome::aborted with the error "interrupted" (CurlTransport within about a
// second at worst, at once when the signal wakes its wait; MultiTransport at its next poll). Set
// it once, before any call starts; null (the default) never interrupts. It must be cheap and
// callable from any thread.
using InterruptCheck = bool (*)();
void set_interrupt_check(InterruptCheck check);
// True when the check is set and answers true.
bool interrupted();
// The error text of a call ended by the interrupt check.
inline constexpr std::string_view kInterruptedError = "interrupted";

// "ok", "connect_error", ...: the enumerator's own name, stable for records on disk.
std::string_view to_string(Outcome outcome);

// Inverse of to_string. Throws kvbench::InputError naming the value and the accepted names.
Outcome outcome_from_string(std::string_view name);

// The call record's outcome of the same name.
kvbench::Outcome call_outcome(Outcome transport);

// libcurl's own phase times for one call, in microseconds from the start of the call; 0 when the
// phase was not reached.
struct TransferTimes {
  std::int64_t connect_us = 0;        // TCP connect done
  std::int64_t pretransfer_us = 0;    // about to send the request
  std::int64_t starttransfer_us = 0;  // first response byte (status line) received
  std::int64_t total_us = 0;          // the whole call
};

struct Result {
  Outcome outcome = Outcome::ok;
  long http_status = 0;  // 0 when no response status line arrived
  // Empty on ok. Otherwise libcurl's message, or for http_error the server's error message
  // (see error_message_from_body), or why the sink stopped the call.
  std::string error;
  Nanos started{0};  // Clock time just before the request was handed to the network
  // Clock time the connection was ready and the request was about to be written (libcurl's
  // pre-request callback: after the connect or the reuse of an open connection); 0 if the call
  // never got that far. request_out - started is the client's and the connect's share of a TTFT.
  Nanos request_out{0};
  Nanos first_byte{0};  // Clock time the first body byte arrived; 0 if none arrived
  Nanos finished{0};    // Clock time the call returned
  // fetch(): the whole body. stream(): only the body of an http_error response.
  std::string body;
  // The response's Retry-After header as sent (seconds or an HTTP date), empty when none came.
  std::string retry_after;
  std::uint64_t bytes_received = 0;  // body bytes, sink-delivered or collected
  long connections_opened = 0;       // 0 when an open keep-alive connection was reused
  TransferTimes times;
};

// Receives one body chunk and the Clock time it arrived. Return false to abort the call
// (Outcome::aborted). The view is valid only during the call.
using ChunkSink = std::function<bool(std::string_view chunk, Nanos arrival)>;

class Transport {
 public:
  Transport() = default;
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Hands each body chunk of a 2xx response to `sink` as it arrives. The body of an error
  // response is collected into Result::body instead and never reaches the sink.
  virtual Result stream(const Request& req, const ChunkSink& sink) = 0;

  // Collects the whole body into Result::body.
  virtual Result fetch(const Request& req) = 0;
};

// Many calls in flight on one thread, each streamed as Transport::stream streams one.
// MultiTransport (libcurl's multi interface) is the real one; tests drive a runner through a
// scripted one.
class ConcurrentTransport {
 public:
  // Called once when a call ends (any outcome); it may start() the next call.
  using Done = std::function<void(Result)>;

  ConcurrentTransport() = default;
  virtual ~ConcurrentTransport() = default;
  ConcurrentTransport(const ConcurrentTransport&) = delete;
  ConcurrentTransport& operator=(const ConcurrentTransport&) = delete;

  // Starts `req` now; a 2xx body reaches `sink` chunk by chunk, as in Transport::stream.
  virtual void start(Request req, ChunkSink sink, Done done) = 0;
  // Moves every call along, waits at most `max_wait`, and calls `done` for each call that ended.
  // Returns the number of calls still in flight.
  virtual std::size_t poll(std::chrono::milliseconds max_wait) = 0;
  // Calls started and not yet done.
  virtual std::size_t in_flight() const = 0;
  // Makes a poll() that waits on another thread return soon (at once where the transport can be
  // woken). Callable from any thread; the only member that is.
  virtual void wake() {}
};

// The message of an error response body: llama-server's {"error":{"message":..}}, Ollama's
// {"error":".."}, a top-level {"message":..}, else the trimmed text (at most 512 bytes, invalid
// UTF-8 replaced by U+FFFD), else "HTTP <status>" for an empty body. Pure.
std::string error_message_from_body(long http_status, std::string_view body);

}  // namespace kvbench::http
