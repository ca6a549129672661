// CurlTransport when things go wrong: refused connections, timeouts, a sink that stops, and
// servers that close or garble a response. Each fault must come back as data, never thrown.

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/http/curl_transport.h"
#include "harness/http/sse.h"
#include "tests/http/local_servers.h"
#include "tests/http/printers.h"

namespace kvbench::http {
namespace {

using test_support::chunk;
using test_support::Gate;
using test_support::HttplibServer;
using test_support::ScriptedServer;
using test_support::send_all;

constexpr std::string_view kEvent1 =
    "data: {\"index\":0,\"content\":\" the\",\"tokens\":[279],\"stop\":false,\"id_slot\":0,"
    "\"tokens_predicted\":1,\"tokens_evaluated\":12}\n\n";
constexpr std::string_view kEvent2 =
    "data: {\"index\":0,\"content\":\" lazy\",\"tokens\":[16053],\"stop\":false,\"id_slot\":0,"
    "\"tokens_predicted\":2,\"tokens_evaluated\":12}\n\n";
constexpr std::string_view kSseHeaders =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

// Collects chunks, frames them as SSE, and can stop after a given count.
struct Collector {
  std::vector<std::string> chunks;
  std::vector<SseEvent> events;
  SseFramer framer;
  Gate* gate = nullptr;
  std::size_t stop_at = 0;  // 0: never stop

  ChunkSink sink() {
    return [this](std::string_view c, Nanos arrival) {
      chunks.emplace_back(c);
      framer.feed(c, arrival, events);
      if (gate != nullptr) {
        gate->reached(static_cast<int>(chunks.size()));
      }
      return stop_at == 0 || chunks.size() < stop_at;
    };
  }
};

// Releases a gate when the scope ends, before the server that waits on it is stopped.
struct ReleaseOnExit {
  Gate& gate;
  ~ReleaseOnExit() { gate.release(); }
};

Request timed_post(std::string url,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds{0}) {
  Request req;
  req.url = std::move(url);
  req.body = R"({"prompt":"hi","stream":true})";
  req.timeout = timeout;
  return req;
}

TEST(CurlTransportFaults, RefusedConnectionIsConnectError) {
  const int port = test_support::closed_port();
  FakeClock clock(Nanos{0}, Nanos{1});
  CurlTransport transport(clock);
  Collector seen;

  const Result r = transport.stream(
      timed_post("http://127.0.0.1:" + std::to_string(port) + "/completion"), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::connect_error);
  EXPECT_EQ(r.http_status, 0);
  EXPECT_NE(r.error.find(std::to_string(port)), std::string::npos) << r.error;
  EXPECT_EQ(r.bytes_received, 0U);
  EXPECT_EQ(r.first_byte, Nanos{0});
  EXPECT_EQ(r.started, Nanos{0});
  EXPECT_EQ(r.finished, Nanos{1});
  EXPECT_TRUE(seen.chunks.empty());
}

TEST(CurlTransportFaults, MalformedUrlIsConnectError) {
  const SteadyClock clock;
  CurlTransport transport(clock);
  const Result r = transport.fetch(timed_post("htp://127.0.0.1/health"));
  EXPECT_EQ(r.outcome, Outcome::connect_error);
  EXPECT_FALSE(r.error.empty());
}

TEST(CurlTransportFaults, NoResponseBeforeTheDeadlineIsTimeout) {
  Gate gate;
  HttplibServer server([&](httplib::Server& s) {
    s.Post("/completion", [&](const httplib::Request&, httplib::Response& res) {
      gate.wait_for(1);  // until the test lets go
      res.set_content("{}", "application/json");
    });
  });
  const ReleaseOnExit release{gate};
  const SteadyClock clock;
  CurlTransport transport(clock);
  Collector seen;

  const Result r = transport.stream(
      timed_post(server.url("/completion"), std::chrono::milliseconds{200}), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::timeout) << r.error;
  EXPECT_EQ(r.http_status, 0);
  EXPECT_EQ(r.first_byte, Nanos{0});
  EXPECT_NE(r.error.find("timed out"), std::string::npos) << r.error;
  EXPECT_TRUE(seen.chunks.empty());
}

TEST(CurlTransportFaults, StallAfterTheFirstChunkIsTimeout) {
  Gate gate;
  HttplibServer server([&](httplib::Server& s) {
    s.Post("/completion", [&](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
        sink.write(kEvent1.data(), kEvent1.size());
        gate.wait_for(1000);  // stalls until the test lets go
        return false;
      });
    });
  });
  const ReleaseOnExit release{gate};
  const SteadyClock clock;
  CurlTransport transport(clock);
  Collector seen;

  const Result r = transport.stream(
      timed_post(server.url("/completion"), std::chrono::milliseconds{300}), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::timeout) << r.error;
  EXPECT_EQ(r.http_status, 200);
  ASSERT_EQ(seen.chunks.size(), 1U);
  EXPECT_EQ(seen.chunks[0], kEvent1);
  EXPECT_EQ(r.bytes_received, kEvent1.size());
  EXPECT_LT(Nanos{0}, r.first_byte);
}

void stream_two_events(httplib::Server& s, Gate& gate) {
  s.Post("/completion", [&gate](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [&gate](size_t, httplib::DataSink& sink) {
      for (int i = 0; i < 5; ++i) {
        const std::string_view e = i % 2 == 0 ? kEvent1 : kEvent2;
        if (!sink.write(e.data(), e.size()) || !gate.wait_for(i + 1)) {
          return false;
        }
      }
      sink.done();
      return true;
    });
  });
  s.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
}

TEST(CurlTransportFaults, SinkReturningFalseAbortsAndTheTransportCarriesOn) {
  Gate gate;
  HttplibServer server([&](httplib::Server& s) { stream_two_events(s, gate); });
  const ReleaseOnExit release{gate};
  const SteadyClock clock;
  CurlTransport transport(clock);
  Collector seen;
  seen.gate = &gate;
  seen.stop_at = 2;

  const Result r = transport.stream(timed_post(server.url("/completion")), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::aborted);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.error, "stopped by the chunk sink");
  EXPECT_EQ(seen.chunks.size(), 2U);
  Request health = timed_post(server.url("/health"));
  health.method = "GET";
  const Result next = transport.fetch(health);
  EXPECT_EQ(next.outcome, Outcome::ok) << next.error;
  EXPECT_EQ(next.connections_opened, 1);  // the aborted connection was not reused
}

TEST(CurlTransportFaults, ExceptionFromTheSinkIsRethrown) {
  Gate gate;
  HttplibServer server([&](httplib::Server& s) { stream_two_events(s, gate); });
  const ReleaseOnExit release{gate};
  const SteadyClock clock;
  CurlTransport transport(clock);
  const ChunkSink throwing = [](std::string_view, Nanos) -> bool {
    throw std::logic_error("decoder bug");
  };

  EXPECT_THROW(transport.stream(timed_post(server.url("/completion")), throwing), std::logic_error);
  Request health = timed_post(server.url("/health"));
  health.method = "GET";
  EXPECT_EQ(transport.fetch(health).outcome, Outcome::ok);
}

// llama-server streams with chunked encoding; a crash mid-stream leaves the last chunk missing.
TEST(CurlTransportFaults, CloseMidChunkedStreamIsStreamError) {
  ScriptedServer server(
      [](int fd) { send_all(fd, std::string(kSseHeaders) + chunk(kEvent1) + chunk(kEvent2)); });
  const SteadyClock clock;
  CurlTransport transport(clock);
  Collector seen;

  const Result r = transport.stream(timed_post(server.url("/completion")), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::stream_error);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_NE(r.error.find("transfer closed"), std::string::npos) << r.error;
  EXPECT_EQ(r.bytes_received, kEvent1.size() + kEvent2.size());
  EXPECT_EQ(seen.events.size(), 2U);
}

TEST(CurlTransportFaults, CloseBeforeContentLengthIsStreamError) {
  ScriptedServer server([](int fd) {
    send_all(fd,
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\n" +
                 std::string(kEvent1));
  });
  const SteadyClock clock;
  CurlTransport transport(clock);
  Collector seen;

  const Result r = transport.stream(timed_post(server.url("/completion")), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::stream_error);
  EXPECT_EQ(r.bytes_received, kEvent1.size());
  EXPECT_EQ(seen.events.size(), 1U);
}

// Without a length or chunking, the close itself ends the body: HTTP calls that complete, so
// whether the stream was whole is for the event decoder to judge (no final "stop":true).
TEST(CurlTransportFaults, CloseDelimitedBodyIsOk) {
  ScriptedServer server([](int fd) {
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" +
                     std::string(kEvent1) + std::string(kEvent2));
  });
  const SteadyClock clock;
  CurlTransport transport(clock);
  Collector seen;

  const Result r = transport.stream(timed_post(server.url("/completion")), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
  EXPECT_EQ(seen.events.size(), 2U);
}

TEST(CurlTransportFaults, CloseWithoutAnyReplyIsStreamError) {
  ScriptedServer server([](int) {});
  const SteadyClock clock;
  CurlTransport transport(clock);

  const Result r = transport.fetch(timed_post(server.url("/completion")));

  EXPECT_EQ(r.outcome, Outcome::stream_error);
  EXPECT_EQ(r.http_status, 0);
  EXPECT_FALSE(r.error.empty());
}

TEST(CurlTransportFaults, NonHttpReplyIsStreamError) {
  ScriptedServer server([](int fd) { send_all(fd, "SSH-2.0-OpenSSH_9.2\r\n"); });
  const SteadyClock clock;
  CurlTransport transport(clock);

  const Result r = transport.fetch(timed_post(server.url("/completion")));

  EXPECT_EQ(r.outcome, Outcome::stream_error) << r.error;
  EXPECT_EQ(r.http_status, 0);
}

// The interrupt check of these tests, and a thread that raises it after a delay.
std::atomic<bool> g_easy_interrupted{false};
bool easy_interrupted() {
  return g_easy_interrupted.load();
}
struct RaiseEasyInterruptSoon {
  RaiseEasyInterruptSoon() {
    g_easy_interrupted = false;
    set_interrupt_check(&easy_interrupted);
    raiser = std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      g_easy_interrupted = true;
    });
  }
  ~RaiseEasyInterruptSoon() {
    raiser.join();
    set_interrupt_check(nullptr);
    g_easy_interrupted = false;
  }
  std::thread raiser;
};

TEST(CurlTransportFaults, InterruptEndsACallWaitingForItsFirstByte) {
  Gate gate;  // never reached: the server holds its answer for 5 s
  HttplibServer server([&](httplib::Server& s) {
    s.Post("/completion", [&](const httplib::Request&, httplib::Response& res) {
      gate.wait_for(1);
      res.set_content("data: late\n\n", "text/event-stream");
    });
  });
  const ReleaseOnExit release{gate};
  const SteadyClock clock;
  CurlTransport transport(clock);
  Collector seen;
  const RaiseEasyInterruptSoon interrupt;

  const Result r = transport.stream(timed_post(server.url("/completion")), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::aborted);
  EXPECT_EQ(r.error, kInterruptedError);
  EXPECT_EQ(r.bytes_received, 0U) << "the call was cut off, not waited out";
  EXPECT_TRUE(seen.chunks.empty());
}

TEST(CurlTransportFaults, NoInterruptCheckNeverInterrupts) {
  set_interrupt_check(nullptr);
  EXPECT_FALSE(interrupted());
  g_easy_interrupted = true;
  EXPECT_FALSE(interrupted());
  set_interrupt_check(&easy_interrupted);
  EXPECT_TRUE(interrupted());
  set_interrupt_check(nullptr);
  g_easy_interrupted = false;
}

}  // namespace
}  // namespace kvbench::http
