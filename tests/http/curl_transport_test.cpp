// CurlTransport against a cpp-httplib server on 127.0.0.1: streaming, error statuses, request
// shape, keep-alive, proxies.

#include "harness/http/curl_transport.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/http/sse.h"
#include "tests/http/chunking.h"
#include "tests/http/local_servers.h"
#include "tests/http/printers.h"

namespace kvbench::http {
namespace {

using test_support::Gate;
using test_support::HttplibServer;

// The recording cut into its events, each "data: ...\n\n".
std::vector<std::string> recorded_events(const std::string& file) {
  const std::string text = test_support::read_recording(file);
  std::vector<std::string> events;
  for (std::size_t begin = 0, end = 0; (end = text.find("\n\n", begin)) != std::string::npos;
       begin = end + 2) {
    events.push_back(text.substr(begin, end + 2 - begin));
  }
  return events;
}

// Serves `events` on POST /completion as one chunk each, sending event k+1 only after the client
// has taken k chunks.
void stream_route(httplib::Server& s, const std::vector<std::string>& events, Gate& gate) {
  s.Post("/completion", [&events, &gate](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream",
                                     [&events, &gate](std::size_t, httplib::DataSink& sink) {
                                       for (std::size_t i = 0; i < events.size(); ++i) {
                                         if (!sink.write(events[i].data(), events[i].size()) ||
                                             !gate.wait_for(static_cast<int>(i) + 1)) {
                                           return false;
                                         }
                                       }
                                       sink.done();
                                       return true;
                                     });
  });
}

// What a sink saw: the raw chunks with their arrivals, and the SSE events framed from them.
struct Captured {
  std::vector<std::string> chunks;
  std::vector<Nanos> arrivals;
  SseFramer framer;
  std::vector<SseEvent> events;
  Gate* gate = nullptr;
  std::optional<std::size_t> stop_after;  // return false on this many chunks

  ChunkSink sink() {
    return [this](std::string_view chunk, Nanos arrival) {
      chunks.emplace_back(chunk);
      arrivals.push_back(arrival);
      framer.feed(chunk, arrival, events);
      if (gate != nullptr) {
        gate->reached(static_cast<int>(chunks.size()));
      }
      return !stop_after || chunks.size() < *stop_after;
    };
  }
};

Request post(std::string url, std::string body = R"({"prompt":"hi","stream":true})") {
  Request req;
  req.url = std::move(url);
  req.body = std::move(body);
  return req;
}

Request get(std::string url) {
  Request req = post(std::move(url), "");
  req.method = "GET";
  return req;
}

TEST(CurlTransport, StreamHandsOverEachChunkWithItsArrival) {
  const auto events = recorded_events("llama_completion.sse");
  ASSERT_EQ(events.size(), 9U);
  Gate gate;
  HttplibServer server([&](httplib::Server& s) { stream_route(s, events, gate); });
  FakeClock clock(Nanos{0}, Nanos{1});  // every now() is one tick later than the last
  CurlTransport transport(clock);
  Captured seen;
  seen.gate = &gate;

  const Result r = transport.stream(post(server.url("/completion")), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(seen.chunks, events);
  std::vector<SseEvent> expected;
  std::uint64_t bytes = 0;
  // ticks: 0 started, 1 request out, 2..10 the chunks, 11 finished
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(seen.arrivals[i], Nanos{static_cast<long>(i) + 2});
    expected.push_back(SseEvent{"message", events[i].substr(6, events[i].size() - 8),
                                Nanos{static_cast<long>(i) + 2}});
    bytes += events[i].size();
  }
  EXPECT_EQ(seen.events, expected);
  EXPECT_EQ(r.started, Nanos{0});
  EXPECT_EQ(r.request_out, Nanos{1});
  EXPECT_EQ(r.first_byte, Nanos{2});
  EXPECT_EQ(r.finished, Nanos{11});
  EXPECT_EQ(r.bytes_received, bytes);
}

TEST(CurlTransport, SteadyClockTimesAreOrdered) {
  const auto events = recorded_events("llama_completion.sse");
  Gate gate;
  HttplibServer server([&](httplib::Server& s) { stream_route(s, events, gate); });
  const SteadyClock clock;
  CurlTransport transport(clock);
  Captured seen;
  seen.gate = &gate;

  const Result r = transport.stream(post(server.url("/completion")), seen.sink());

  ASSERT_EQ(r.outcome, Outcome::ok) << r.error;
  ASSERT_EQ(seen.events.size(), events.size());
  EXPECT_GT(r.request_out, Nanos{0});
  EXPECT_LE(r.started, r.request_out);
  EXPECT_LE(r.request_out, r.first_byte);
  EXPECT_EQ(r.first_byte, seen.arrivals.front());
  EXPECT_LE(r.first_byte, seen.events.front().arrival);
  for (std::size_t i = 1; i < seen.events.size(); ++i) {
    EXPECT_LE(seen.events[i - 1].arrival, seen.events[i].arrival);
  }
  EXPECT_LE(seen.events.back().arrival, r.finished);
  EXPECT_LE(r.times.pretransfer_us, r.times.starttransfer_us);
  EXPECT_LE(r.times.starttransfer_us, r.times.total_us);
}

constexpr const char* kLlamaError =
    R"({"error":{"code":500,"message":"slot unavailable","type":"server_error"}})";

TEST(CurlTransport, ErrorStatusOnAStreamIsCollectedNotStreamed) {
  HttplibServer server([](httplib::Server& s) {
    s.Post("/completion", [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content(kLlamaError, "application/json");
    });
  });
  FakeClock clock(Nanos{0}, Nanos{1});
  CurlTransport transport(clock);
  Captured seen;

  const Result r = transport.stream(post(server.url("/completion")), seen.sink());

  EXPECT_EQ(r.outcome, Outcome::http_error);
  EXPECT_EQ(r.http_status, 500);
  EXPECT_EQ(r.error, "slot unavailable");
  EXPECT_EQ(r.body, kLlamaError);
  EXPECT_TRUE(seen.chunks.empty());
  EXPECT_EQ(r.bytes_received, std::string(kLlamaError).size());
  EXPECT_EQ(r.started, Nanos{0});
  EXPECT_EQ(r.request_out, Nanos{1});
  EXPECT_EQ(r.first_byte, Nanos{2});
  EXPECT_EQ(r.finished, Nanos{3});
}

// A refusal's Retry-After is kept as sent, whatever the header's case; a response without one
// leaves it empty.
TEST(CurlTransport, RetryAfterOfARefusalIsKept) {
  HttplibServer server([](httplib::Server& s) {
    s.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.status = 429;
      res.set_header("retry-after", "17");
      res.set_content(R"({"error":{"message":"rate limited"}})", "application/json");
    });
    s.Post("/completion", [](const httplib::Request&, httplib::Response& res) {
      res.status = 503;
      res.set_content(kLlamaError, "application/json");
    });
  });
  const SteadyClock clock;
  CurlTransport transport(clock);
  Captured seen;

  const Result refused = transport.stream(post(server.url("/v1/chat/completions")), seen.sink());
  const Result plain = transport.fetch(post(server.url("/completion")));

  EXPECT_EQ(refused.http_status, 429);
  EXPECT_EQ(refused.retry_after, "17");
  EXPECT_EQ(refused.error, "rate limited");
  EXPECT_EQ(plain.http_status, 503);
  EXPECT_EQ(plain.retry_after, "");
}

TEST(CurlTransport, NotFoundWithOllamaBodyIsHttpError) {
  HttplibServer server([](httplib::Server& s) {
    s.Post("/api/generate", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content(R"({"error":"model 'llama9' not found"})", "application/json");
    });
  });
  const SteadyClock clock;
  CurlTransport transport(clock);

  const Result r = transport.fetch(post(server.url("/api/generate")));

  EXPECT_EQ(r.outcome, Outcome::http_error);
  EXPECT_EQ(r.http_status, 404);
  EXPECT_EQ(r.error, "model 'llama9' not found");
  EXPECT_EQ(r.body, R"({"error":"model 'llama9' not found"})");
}

TEST(CurlTransport, UnknownPathWithEmptyBodyNamesTheStatus) {
  HttplibServer server([](httplib::Server&) {});
  const SteadyClock clock;
  CurlTransport transport(clock);

  const Result r = transport.fetch(get(server.url("/nowhere")));

  EXPECT_EQ(r.outcome, Outcome::http_error);
  EXPECT_EQ(r.http_status, 404);
  EXPECT_EQ(r.error, "HTTP 404");
}

TEST(CurlTransport, RedirectIsNotFollowed) {
  HttplibServer server([](httplib::Server& s) {
    s.Get("/old",
          [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/new"); });
  });
  const SteadyClock clock;
  CurlTransport transport(clock);

  const Result r = transport.fetch(get(server.url("/old")));

  EXPECT_EQ(r.outcome, Outcome::http_error);
  EXPECT_EQ(r.http_status, 302);
}

void health_route(httplib::Server& s) {
  s.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
}

TEST(CurlTransport, FetchCollectsTheBodyAndKeepsTheConnection) {
  HttplibServer server(health_route);
  const SteadyClock clock;
  CurlTransport transport(clock);

  const Result first = transport.fetch(get(server.url("/health")));
  const Result second = transport.fetch(get(server.url("/health")));

  EXPECT_EQ(first.outcome, Outcome::ok) << first.error;
  EXPECT_EQ(first.body, R"({"status":"ok"})");
  EXPECT_EQ(first.bytes_received, 15U);
  EXPECT_EQ(first.connections_opened, 1);
  EXPECT_EQ(second.outcome, Outcome::ok) << second.error;
  EXPECT_EQ(second.body, R"({"status":"ok"})");
  EXPECT_EQ(second.connections_opened, 0);
}

// What the server saw of one request.
struct SeenRequest {
  std::string method;
  std::string body;
  std::string content_type;
  std::size_t content_type_count = 0;
  bool has_expect = false;
  std::string authorization;
};

class RequestShape : public ::testing::Test {
 protected:
  RequestShape()
      : server_([this](httplib::Server& s) {
          const auto record = [this](const httplib::Request& req, httplib::Response& res) {
            const std::lock_guard lock(mutex_);
            seen_ = {req.method,
                     req.body,
                     req.get_header_value("Content-Type"),
                     req.get_header_value_count("Content-Type"),
                     req.has_header("Expect"),
                     req.get_header_value("Authorization")};
            res.set_content("{}", "application/json");
          };
          s.Post("/echo", record);
          s.Put("/echo", record);
          s.Get("/echo", record);
        }) {}

  SeenRequest send(const Request& req) {
    const Result r = transport_.fetch(req);
    EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
    const std::lock_guard lock(mutex_);
    return seen_;
  }

  std::mutex mutex_;
  SeenRequest seen_;
  HttplibServer server_;
  SteadyClock clock_;
  CurlTransport transport_{clock_};
};

TEST_F(RequestShape, LargePostIsJsonWithoutExpectAndWithGivenHeaders) {
  Request req = post(server_.url("/echo"), std::string(2048, 'x'));
  req.headers = {{"Authorization", "Bearer k1"}};
  const SeenRequest seen = send(req);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.body, std::string(2048, 'x'));
  EXPECT_EQ(seen.content_type, "application/json");
  EXPECT_FALSE(seen.has_expect);
  EXPECT_EQ(seen.authorization, "Bearer k1");
}

TEST_F(RequestShape, GivenContentTypeIsKept) {
  Request req = post(server_.url("/echo"), "hello");
  req.headers = {{"content-type", "text/plain"}};
  const SeenRequest seen = send(req);
  EXPECT_EQ(seen.content_type, "text/plain");
  EXPECT_EQ(seen.content_type_count, 1U);
}

TEST_F(RequestShape, GetSendsNoBodyAndOtherMethodsDo) {
  const SeenRequest got = send(get(server_.url("/echo")));
  EXPECT_EQ(got.method, "GET");
  EXPECT_EQ(got.body, "");
  EXPECT_EQ(got.content_type_count, 0U);
  Request put = post(server_.url("/echo"), R"({"a":1})");
  put.method = "PUT";
  const SeenRequest seen = send(put);
  EXPECT_EQ(seen.method, "PUT");
  EXPECT_EQ(seen.body, R"({"a":1})");
}

// Sets environment variables for one scope, then puts the old values back.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<const char*> names, const std::string& value) {
    for (const char* name : names) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name, value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(CurlTransport, ProxyEnvironmentIsIgnored) {
  HttplibServer server(health_route);
  const ScopedEnv env({"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"},
                      "http://127.0.0.1:" + std::to_string(test_support::closed_port()));
  const SteadyClock clock;
  CurlTransport transport(clock);

  const Result r = transport.fetch(get(server.url("/health")));

  EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
  EXPECT_EQ(r.body, R"({"status":"ok"})");
}

}  // namespace
}  // namespace kvbench::http
