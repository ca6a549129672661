#pragma once
// Many calls in flight on one thread: libcurl's multi interface. Each call streams through the
// same write callback as CurlTransport, so every chunk is stamped on arrival by the one Clock and
// a call's Result means exactly what it means there. Server faults are data, as there.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "harness/core/clock.h"
#include "harness/http/transport.h"

namespace kvbench::http {

// `done` is called after the call's handle left the multi handle, so it may start() the next call.
class MultiTransport final : public ConcurrentTransport {
 public:
  // Timestamps come from `clock`, which must outlive this object. Throws kvbench::Error if
  // libcurl cannot be initialised.
  explicit MultiTransport(const Clock& clock);
  ~MultiTransport() override;
  MultiTransport(const MultiTransport&) = delete;
  MultiTransport& operator=(const MultiTransport&) = delete;

  // Starts `req` now (Result::started is stamped here): libcurl connects (or takes an open
  // connection) and writes the request before start() returns, as far as the socket allows; the
  // rest happens in poll(). Must not be called from a sink. A 2xx body reaches `sink` chunk by
  // chunk; an error body is collected as in CurlTransport. Returning false from the sink aborts
  // that call only.
  void start(Request req, ChunkSink sink, Done done) override;

  // Moves every call along, waits at most `max_wait` for network activity, and calls `done` for
  // each call that ended. When the interrupt check (set_interrupt_check) answers true, every call
  // still in flight ends at once as aborted, "interrupted". Rethrows an exception thrown by a sink
  // or a Done callback. Returns the number of calls still in flight.
  std::size_t poll(std::chrono::milliseconds max_wait) override;

  // Calls started and not yet done.
  std::size_t in_flight() const override { return active_; }

  // Ends the wait of a poll() on another thread at once (an eventfd in its epoll set).
  void wake() override;

 private:
  struct Transfer;
  class Multi;  // the CURLM handle and its epoll set, kept out of this header
  void act_and_finish();
  void finish_ended();
  void interrupt_all();
  std::pair<Result, Done> retire(std::unique_ptr<Transfer> t, int code, Nanos finished);

  const Clock& clock_;
  std::unique_ptr<Multi> multi_;
  std::vector<std::unique_ptr<Transfer>> idle_;  // easy handles kept for reuse
  std::vector<std::unique_ptr<Transfer>> busy_;
  std::size_t active_ = 0;
  bool started_in_callback_ = false;
};

}  // namespace kvbench::http
