#pragma once
// Transports for tests, no network: ScriptedTransport replays chunks for a stream and a body for a
// fetch (or, strict, throws on any call); ScriptedConcurrentTransport holds the calls it
// is given and ends them one by one at each poll, the clock moving as the script says.

#include <chrono>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/clock.h"
#include "harness/http/transport.h"

namespace kvbench::test_support {

// stream(): the chunks arrive `gap` apart, the first at `start` + `gap`, and the call ends with
// `end` one gap after the last (aborted, with an error, when the sink says stop); fetch(): 200
// with `fetch_body`. A strict transport throws std::logic_error on either: a test that must send
// nothing through it fails.
class ScriptedTransport final : public http::Transport {
 public:
  explicit ScriptedTransport(bool strict = false) : strict_(strict) {}

  std::vector<std::string> chunks;
  http::Outcome end = http::Outcome::ok;
  Nanos start{0};
  Nanos gap = std::chrono::milliseconds(10);
  std::string fetch_body = R"({"tokens":[1,259,68,{"id":7,"piece":"x"}]})";
  http::Request last;
  int calls = 0;

  http::Result stream(const http::Request& req, const http::ChunkSink& sink) override {
    note(req);
    http::Result r;
    r.http_status = 200;
    r.started = start;
    r.outcome = end;
    Nanos t = start;
    for (const auto& chunk : chunks) {
      t += gap;
      r.first_byte = r.first_byte == Nanos{0} ? t : r.first_byte;
      if (!sink(chunk, t)) {
        r.outcome = http::Outcome::aborted;
        r.error = "aborted by the sink";
        break;
      }
    }
    r.finished = t + gap;
    return r;
  }

  http::Result fetch(const http::Request& req) override {
    note(req);
    http::Result r;
    r.http_status = 200;
    r.body = fetch_body;
    return r;
  }

 private:
  void note(const http::Request& req) {
    if (strict_) {
      throw std::logic_error("unexpected call to " + req.url);
    }
    last = req;
    ++calls;
  }
  bool strict_;
};

// Each poll() ends the calls in flight when it began, oldest first: `chunks` chunks each,
// `chunk_gap` apart on `clock`, then done() with `outcome` (a call started from a done callback
// waits for the next poll). `first_chunk` passes between a call's start and its first chunk.
class ScriptedConcurrentTransport final : public http::ConcurrentTransport {
 public:
  // Every request started is appended to `requests`, which must outlive this transport.
  ScriptedConcurrentTransport(FakeClock& clock, std::vector<http::Request>& requests)
      : clock_(clock), requests_(requests) {}

  int chunks = 4;
  std::string chunk = "t";
  Nanos first_chunk = std::chrono::milliseconds(50);
  Nanos chunk_gap = std::chrono::milliseconds(10);
  http::Outcome outcome = http::Outcome::ok;

  void start(http::Request req, http::ChunkSink sink, Done done) override {
    requests_.push_back(req);
    pending_.push_back({std::move(sink), std::move(done), clock_.now()});
  }

  std::size_t poll(std::chrono::milliseconds /*max_wait*/) override {
    for (std::size_t n = pending_.size(); n > 0; --n) {
      Call c = std::move(pending_.front());
      pending_.pop_front();
      http::Result r;
      r.started = c.started;
      r.request_out = c.started;
      r.http_status = 200;
      r.outcome = outcome;
      clock_.advance(first_chunk);
      r.first_byte = clock_.now();
      for (int i = 0; i < chunks; ++i) {
        if (i > 0) {
          clock_.advance(chunk_gap);
        }
        if (!c.sink(chunk, clock_.now())) {
          r.outcome = http::Outcome::aborted;
          break;
        }
      }
      r.finished = clock_.now();
      c.done(r);
    }
    return pending_.size();
  }

  std::size_t in_flight() const override { return pending_.size(); }

 private:
  struct Call {
    http::ChunkSink sink;
    Done done;
    Nanos started;
  };
  FakeClock& clock_;
  std::vector<http::Request>& requests_;
  std::deque<Call> pending_;
};

}  // namespace kvbench::test_support
