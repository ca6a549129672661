// An attached server's kind is asked, not assumed: /props, /api/version, /v1/models in that order,
// the first that answers as its kind deciding, and what the server says of itself kept.

#include "harness/servers/find_kind.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kvbench::servers {
namespace {

using nlohmann::json;
using scenario::ServerKind;
using ::testing::HasSubstr;

// Answers GETs by path (after the host) with a status and a body; any other path is a 404, and
// with `refuse` every request finds nothing listening.
class RoutedTransport final : public http::Transport {
 public:
  std::map<std::string, std::pair<long, std::string>> routes;
  std::vector<std::string> asked;
  bool refuse = false;

  http::Result stream(const http::Request&, const http::ChunkSink&) override {
    throw std::logic_error("find_server only fetches");
  }
  http::Result fetch(const http::Request& req) override {
    const auto path = req.url.substr(req.url.find('/', req.url.find("://") + 3));
    asked.push_back(path);
    http::Result r;
    if (refuse) {
      r.outcome = http::Outcome::connect_error;
      r.error = "Couldn't connect to server";
      return r;
    }
    const auto it = routes.find(path);
    r.http_status = it == routes.end() ? 404 : it->second.first;
    r.outcome = r.http_status == 200 ? http::Outcome::ok : http::Outcome::http_error;
    r.body = it == routes.end() ? "" : it->second.second;
    return r;
  }
};

scenario::Scenario attached(const std::string& factors) {
  return scenario::parse_scenario(
      R"({"name": "a", "server": {"url": "http://127.0.0.1:8080"}, "factors": )" + factors + "}",
      "a.json");
}

TEST(FindKind, LlamaServerAnswersPropsAndSaysItsContextSlotsAndModel) {
  RoutedTransport t;
  t.routes["/props"] = {200, R"({"default_generation_settings": {"n_ctx": 2048},
    "total_slots": 1, "model_path": "/m/tiny.gguf", "build_info": "b11669-Debian"})"};
  const auto f = find_server(t, "http://127.0.0.1:8080/v1", {});
  ASSERT_EQ(f.kind, ServerKind::llama_server);
  EXPECT_EQ(t.asked, std::vector<std::string>{"/props"}) << "a /v1 URL is asked at its root";
  EXPECT_EQ(f.reports["n_ctx"], 2048);
  EXPECT_EQ(f.reports["total_slots"], 1);
  EXPECT_EQ(f.reports["model_path"], "/m/tiny.gguf");
  EXPECT_EQ(url_for(f, ServerKind::llama_server, "http://127.0.0.1:8080/v1"),
            "http://127.0.0.1:8080");
  EXPECT_EQ(url_for(f, ServerKind::openai, "http://127.0.0.1:8080"), "http://127.0.0.1:8080/v1");
  EXPECT_THAT(describe_found(f, ServerKind::llama_server), HasSubstr("every call is proved"));
  // What the user stated of a factor only a restart changes, beside what the server reports.
  const auto same = found_json(f, attached(R"({"prompt_tokens": [256], "num_ctx": [2048]})"));
  EXPECT_EQ(same["stated"]["num_ctx"]["check"], "confirmed");
  EXPECT_EQ(same["stated"]["cache_type"]["check"], "unverified");
  const auto other = found_json(f, attached(R"({"prompt_tokens": [256], "num_ctx": [4096]})"));
  EXPECT_EQ(other["stated"]["num_ctx"]["check"], "differs");
  EXPECT_EQ(other["stated"]["num_ctx"]["server"], 2048);
}

TEST(FindKind, OllamaAnswersItsVersionAndServesTheOpenAiApiAtV1) {
  RoutedTransport t;
  t.routes["/props"] = {200, R"({"something": "else"})"};
  t.routes["/api/version"] = {200, R"({"version": "0.12.3"})"};
  const auto f = find_server(t, "http://127.0.0.1:11434/", {});
  ASSERT_EQ(f.kind, ServerKind::ollama);
  EXPECT_EQ(f.reports["version"], "0.12.3");
  EXPECT_EQ(f.tried.size(), 1U);
  EXPECT_THAT(f.tried.front().second, HasSubstr("without llama-server's"));
  EXPECT_EQ(url_for(f, ServerKind::ollama, "http://127.0.0.1:11434/"), "http://127.0.0.1:11434");
  EXPECT_EQ(url_for(f, ServerKind::openai, "http://127.0.0.1:11434/"), "http://127.0.0.1:11434/v1");
  EXPECT_TRUE(serves(ServerKind::ollama, ServerKind::openai));
  EXPECT_FALSE(serves(ServerKind::ollama, ServerKind::llama_server));
  EXPECT_FALSE(serves(ServerKind::llama_server, ServerKind::ollama));
  EXPECT_TRUE(serves(ServerKind::llama_server, ServerKind::anthropic));
}

TEST(FindKind, AnOpenAiCompatibleServerListsItsModels) {
  RoutedTransport t;
  t.routes["/v1/models"] = {
      200, R"({"object": "list", "data": [{"id": "qwen", "max_model_len": 8192}, {"id": "b"}]})"};
  const auto f = find_server(t, "http://127.0.0.1:8000/v1", {{"Authorization", "Bearer k"}});
  ASSERT_EQ(f.kind, ServerKind::openai);
  EXPECT_EQ(t.asked, (std::vector<std::string>{"/props", "/api/version", "/v1/models"}));
  EXPECT_EQ(f.reports["models"], json::parse(R"(["qwen", "b"])"));
  EXPECT_EQ(f.reports["max_model_len"], 8192);
  EXPECT_EQ(url_for(f, ServerKind::openai, "http://127.0.0.1:8000/v1/"),
            "http://127.0.0.1:8000/v1");
  EXPECT_THAT(describe_found(f, ServerKind::openai), HasSubstr("stays unproved where it does not"));
}

TEST(FindKind, NothingAnsweringNamesWhatWasTried) {
  RoutedTransport t;
  t.refuse = true;
  const auto f = find_server(t, "http://127.0.0.1:9", {});
  EXPECT_FALSE(f.kind);
  EXPECT_EQ(tried_text(f),
            "GET /props, /api/version and /v1/models at http://127.0.0.1:9: Couldn't connect to "
            "server");
  RoutedTransport some;
  some.routes["/v1/models"] = {401, ""};
  const auto g = find_server(some, "http://127.0.0.1:9", {});
  EXPECT_FALSE(g.kind);
  EXPECT_EQ(tried_text(g),
            "at http://127.0.0.1:9: GET /props: HTTP 404; GET /api/version: HTTP 404; GET "
            "/v1/models: HTTP 401");
}

TEST(FindKind, RefusalsThatDifferOnlyInTheirTimeReadAsOne) {
  FoundServer f;
  f.root = "http://127.0.0.1:9";
  f.tried = {{"/props", "Failed to connect to 127.0.0.1 port 9 after 1 ms: refused"},
             {"/api/version", "Failed to connect to 127.0.0.1 port 9 after 0 ms: refused"},
             {"/v1/models", "Failed to connect to 127.0.0.1 port 9 after 12 ms: refused"}};
  EXPECT_EQ(tried_text(f),
            "GET /props, /api/version and /v1/models at http://127.0.0.1:9: Failed to connect to "
            "127.0.0.1 port 9: refused");
  f.tried.back().second = "Failed to connect to 127.0.0.1 port 9 after 2 ms: reset";
  EXPECT_THAT(tried_text(f), HasSubstr("GET /v1/models: Failed to connect to 127.0.0.1 port 9 "
                                       "after 2 ms: reset"))
      << "a different failure is said path by path, as it came";
}

}  // namespace
}  // namespace kvbench::servers
