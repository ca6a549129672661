// MultiTransport against cpp-httplib servers on 127.0.0.1: calls really in flight together, calls
// started from a Done callback, libcurl's timers (timeouts) and every fault a call can end in.

#include "harness/http/multi_transport.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/local_servers.h"
#include "tests/http/printers.h"

namespace kvbench::http {
namespace {

using namespace std::chrono_literals;
using test_support::Gate;
using test_support::HttplibServer;

Request multi_post(std::string url, std::chrono::milliseconds timeout = 10s) {
  Request req;
  req.url = std::move(url);
  req.body = R"({"prompt":"hi","stream":true})";
  req.timeout = timeout;
  return req;
}

// Holds each request until `expected` requests are inside the server at once (or 5 s passed),
// then answers with how many it saw: only calls that are truly in flight together all see them.
class Rendezvous {
 public:
  explicit Rendezvous(int expected) : expected_(expected) {}
  int arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    changed_.wait_for(lock, 5s, [&] { return arrived_ >= expected_; });
    return arrived_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int expected_;
  int arrived_ = 0;
};

// One call's outcome as its callbacks saw it.
struct Seen {
  std::string body;
  std::vector<Nanos> arrivals;
  std::optional<Result> result;
};

// Runs poll() until nothing is in flight, with a bound on the rounds so a hang fails the test.
void drain(MultiTransport& multi) {
  for (int round = 0; round < 2000 && multi.poll(50ms) > 0; ++round) {
  }
  ASSERT_EQ(multi.in_flight(), 0U);
}

void start(MultiTransport& multi, const Request& req, Seen& seen) {
  multi.start(
      req,
      [&seen](std::string_view chunk, Nanos arrival) {
        seen.body.append(chunk);
        seen.arrivals.push_back(arrival);
        return true;
      },
      [&seen](Result r) { seen.result = std::move(r); });
}

TEST(MultiTransport, CallsAreInFlightTogether) {
  constexpr int kCalls = 4;
  Rendezvous rendezvous(kCalls);
  HttplibServer server([&](httplib::Server& s) {
    s.Post("/completion", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content("data: {\"together\":" + std::to_string(rendezvous.arrive()) + "}\n\n",
                      "text/event-stream");
    });
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  std::vector<Seen> seen(kCalls);
  for (auto& s : seen) {
    start(multi, multi_post(server.url("/completion")), s);
  }
  EXPECT_EQ(multi.in_flight(), static_cast<std::size_t>(kCalls));
  drain(multi);

  for (const auto& s : seen) {
    ASSERT_TRUE(s.result.has_value());
    EXPECT_EQ(s.result->outcome, Outcome::ok) << s.result->error;
    EXPECT_EQ(s.body, "data: {\"together\":4}\n\n");
    // started <= request out <= first byte <= finished, all from the one clock
    EXPECT_GT(s.result->request_out, Nanos{0});
    EXPECT_LE(s.result->started, s.result->request_out);
    EXPECT_LE(s.result->request_out, s.result->first_byte);
    EXPECT_LE(s.result->first_byte, s.result->finished);
    ASSERT_FALSE(s.arrivals.empty());
    EXPECT_EQ(s.arrivals.front(), s.result->first_byte);
  }
}

TEST(MultiTransport, ChunksOfOneCallArriveInOrderWhileAnotherStreams) {
  Gate gate_a;
  Gate gate_b;
  const auto route = [](Gate& gate) {
    return [&gate](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider(
          "text/event-stream", [&gate](std::size_t, httplib::DataSink& sink) {
            for (int i = 0; i < 3; ++i) {
              const std::string event = "data: " + std::to_string(i) + "\n\n";
              if (!sink.write(event.data(), event.size()) || !gate.wait_for(i + 1)) {
                return false;
              }
            }
            sink.done();
            return true;
          });
    };
  };
  HttplibServer server([&](httplib::Server& s) {
    s.Post("/a", route(gate_a));
    s.Post("/b", route(gate_b));
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  Seen a;
  Seen b;
  const auto gated = [&multi](const Request& req, Seen& seen, Gate& gate) {
    multi.start(
        req,
        [&seen, &gate](std::string_view chunk, Nanos arrival) {
          seen.body.append(chunk);
          seen.arrivals.push_back(arrival);
          gate.reached(static_cast<int>(seen.arrivals.size()));
          return true;
        },
        [&seen](Result r) { seen.result = std::move(r); });
  };
  gated(multi_post(server.url("/a")), a, gate_a);
  gated(multi_post(server.url("/b")), b, gate_b);
  drain(multi);
  gate_a.release();
  gate_b.release();

  for (const Seen* s : {&a, &b}) {
    ASSERT_TRUE(s->result.has_value());
    EXPECT_EQ(s->result->outcome, Outcome::ok) << s->result->error;
    EXPECT_EQ(s->body, "data: 0\n\ndata: 1\n\ndata: 2\n\n");
    ASSERT_EQ(s->arrivals.size(), 3U);
    EXPECT_LT(s->arrivals[0], s->arrivals[1]);
    EXPECT_LT(s->arrivals[1], s->arrivals[2]);
  }
}

TEST(MultiTransport, DoneMayStartTheNextCallWhichReusesTheConnection) {
  HttplibServer server([](httplib::Server& s) {
    s.Post("/completion", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("data: " + req.get_param_value("n") + "\n\n", "text/event-stream");
    });
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  std::vector<Seen> seen(5);
  std::function<void(std::size_t)> launch = [&](std::size_t n) {
    multi.start(
        multi_post(server.url("/completion?n=" + std::to_string(n))),
        [&seen, n](std::string_view chunk, Nanos) {
          seen[n].body.append(chunk);
          return true;
        },
        [&, n](Result r) {
          seen[n].result = std::move(r);
          if (n + 1 < seen.size()) {
            launch(n + 1);
          }
        });
  };
  launch(0);
  drain(multi);

  for (std::size_t n = 0; n < seen.size(); ++n) {
    ASSERT_TRUE(seen[n].result.has_value()) << n;
    EXPECT_EQ(seen[n].result->outcome, Outcome::ok) << seen[n].result->error;
    EXPECT_EQ(seen[n].body, "data: " + std::to_string(n) + "\n\n");
    EXPECT_EQ(seen[n].result->connections_opened, n == 0 ? 1 : 0) << n;
  }
}

TEST(MultiTransport, NoResponseBeforeTheDeadlineIsTimeout) {
  Gate gate;
  HttplibServer server([&](httplib::Server& s) {
    s.Post("/completion", [&](const httplib::Request&, httplib::Response& res) {
      gate.wait_for(1);  // until the test lets go
      res.set_content("{}", "application/json");
    });
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  Seen seen;
  start(multi, multi_post(server.url("/completion"), 200ms), seen);
  drain(multi);
  gate.release();

  ASSERT_TRUE(seen.result.has_value());
  EXPECT_EQ(seen.result->outcome, Outcome::timeout) << seen.result->error;
  EXPECT_GT(seen.result->request_out, Nanos{0});  // the request went out; the answer was late
  EXPECT_TRUE(seen.body.empty());
}

TEST(MultiTransport, RefusedConnectionIsConnectErrorWithoutARequestOut) {
  const SteadyClock clock;
  MultiTransport multi(clock);
  Seen seen;
  start(multi, multi_post("http://127.0.0.1:" + std::to_string(test_support::closed_port()) + "/x"),
        seen);
  drain(multi);

  ASSERT_TRUE(seen.result.has_value());
  EXPECT_EQ(seen.result->outcome, Outcome::connect_error);
  EXPECT_EQ(seen.result->request_out, Nanos{0});
  EXPECT_FALSE(seen.result->error.empty());
}

TEST(MultiTransport, ErrorStatusIsCollectedNotStreamed) {
  HttplibServer server([](httplib::Server& s) {
    s.Post("/completion", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_content(R"({"error":{"code":503,"message":"Loading model"}})", "application/json");
    });
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  Seen seen;
  start(multi, multi_post(server.url("/completion")), seen);
  drain(multi);

  ASSERT_TRUE(seen.result.has_value());
  EXPECT_EQ(seen.result->outcome, Outcome::http_error);
  EXPECT_EQ(seen.result->http_status, 503);
  EXPECT_EQ(seen.result->error, "Loading model");
  EXPECT_TRUE(seen.body.empty());
}

TEST(MultiTransport, SinkStoppingOneCallLeavesTheOthers) {
  HttplibServer server([](httplib::Server& s) {
    s.Post("/completion", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("data: 1\n\n", "text/event-stream");
    });
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  Seen stopped;
  Seen kept;
  multi.start(
      multi_post(server.url("/completion")), [](std::string_view, Nanos) { return false; },
      [&stopped](Result r) { stopped.result = std::move(r); });
  start(multi, multi_post(server.url("/completion")), kept);
  drain(multi);

  ASSERT_TRUE(stopped.result.has_value());
  EXPECT_EQ(stopped.result->outcome, Outcome::aborted);
  ASSERT_TRUE(kept.result.has_value());
  EXPECT_EQ(kept.result->outcome, Outcome::ok) << kept.result->error;
  EXPECT_EQ(kept.body, "data: 1\n\n");
}

TEST(MultiTransport, ExceptionFromASinkIsRethrownByPoll) {
  HttplibServer server([](httplib::Server& s) {
    s.Post("/completion", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("data: 1\n\n", "text/event-stream");
    });
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  bool done_called = false;
  multi.start(
      multi_post(server.url("/completion")),
      [](std::string_view, Nanos) -> bool { throw std::runtime_error("sink failed"); },
      [&done_called](const Result&) { done_called = true; });
  EXPECT_THROW(
      {
        for (int round = 0; round < 2000 && multi.poll(50ms) > 0; ++round) {
        }
      },
      std::runtime_error);
  EXPECT_FALSE(done_called);
  EXPECT_EQ(multi.in_flight(), 0U);
}

std::atomic<bool> g_multi_interrupted{false};
bool multi_interrupted() {
  return g_multi_interrupted.load();
}

TEST(MultiTransport, InterruptEndsEveryCallInFlightAtTheNextPoll) {
  Gate gate;  // never reached: every answer is held for 5 s
  HttplibServer server([&](httplib::Server& s) {
    s.Post("/completion", [&](const httplib::Request&, httplib::Response& res) {
      gate.wait_for(1);
      res.set_content("data: late\n\n", "text/event-stream");
    });
  });
  const SteadyClock clock;
  MultiTransport multi(clock);
  g_multi_interrupted = false;
  set_interrupt_check(&multi_interrupted);
  std::vector<Seen> seen(3);
  for (auto& s : seen) {
    start(multi, multi_post(server.url("/completion"), 30s), s);
  }
  EXPECT_EQ(multi.poll(100ms), 3U);
  g_multi_interrupted = true;
  EXPECT_EQ(multi.poll(100ms), 0U);
  set_interrupt_check(nullptr);
  g_multi_interrupted = false;
  gate.release();
  for (const auto& s : seen) {
    ASSERT_TRUE(s.result.has_value());
    EXPECT_EQ(s.result->outcome, Outcome::aborted);
    EXPECT_EQ(s.result->error, kInterruptedError);
    EXPECT_TRUE(s.body.empty());
  }
  // The transport carries on: a later call is not interrupted.
  Seen later;
  start(multi, multi_post(server.url("/completion")), later);
  drain(multi);
  ASSERT_TRUE(later.result.has_value());
  EXPECT_EQ(later.result->outcome, Outcome::ok) << later.result->error;
}

}  // namespace
}  // namespace kvbench::http
