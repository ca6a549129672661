#include "harness/backend/llama_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/backend/completion_stream.h"
#include "harness/servers/managed_server.h"
#include "tests/support/scripted_transport.h"

namespace kvbench::backend {
namespace {

using servers::llama_server_argv;  // how a managed llama-server is started (harness/servers)
using servers::LlamaServerLaunch;
using servers::prompt_cache_settings;
using std::chrono::milliseconds;
using Type = CompletionEvent::Type;

TEST(DecodeEvent, PartialFinalErrorAndIgnored) {
  auto p = decode_completion_event(
      "message",
      R"({"index":0,"content":" the","tokens":[1234],"stop":false,"tokens_predicted":1})");
  EXPECT_EQ(p.type, Type::partial);
  EXPECT_EQ(p.tokens, 1);
  EXPECT_EQ(p.tokens_predicted, 1);
  auto f = decode_completion_event(
      "message", R"({"content":"","tokens":[],"stop":true,"timings":{"cache_n":2,"prompt_n":9}})");
  EXPECT_EQ(f.type, Type::final);
  EXPECT_EQ(f.tokens, 0);
  EXPECT_EQ(f.timings["cache_n"], 2);
  EXPECT_EQ(decode_completion_event("message", "[DONE]").type, Type::ignored);
  auto e1 = decode_completion_event("message", R"({"error":{"code":500,"message":"boom"}})");
  EXPECT_EQ(e1.type, Type::error);
  EXPECT_EQ(e1.error, "boom");
  auto e2 = decode_completion_event("error", R"({"message":"old style"})");
  EXPECT_EQ(e2.type, Type::error);
  EXPECT_EQ(e2.error, "old style");
  auto bad = decode_completion_event("message", R"({"content": "x)");
  EXPECT_EQ(bad.type, Type::error);
  EXPECT_THAT(bad.error, ::testing::HasSubstr("malformed stream event"));
}

// Found by fuzzing: each of these threw, broke the measurement arithmetic, or gave a message that
// could not be written into calls.jsonl.
TEST(DecodeEvent, HostileEventsStayData) {
  const auto stop_number = decode_completion_event("message", R"({"content":"a","stop":1})");
  EXPECT_EQ(stop_number.type, Type::partial);  // "stop" must be true, not truthy; it threw
  EXPECT_EQ(stop_number.tokens, 1);
  EXPECT_FALSE(
      decode_completion_event("message", R"({"tokens_predicted":-2147483648})").tokens_predicted);
  EXPECT_FALSE(
      decode_completion_event("message", R"({"tokens_predicted":1e300})").tokens_predicted);
  const auto empty = decode_completion_event("error", "");
  EXPECT_EQ(empty.type, Type::error);
  EXPECT_EQ(empty.error, "the server sent an error event without a message");
  EXPECT_EQ(decode_completion_event("message", R"({"error":""})").error,
            "the server sent an error event without a message");
  EXPECT_EQ(decode_completion_event("error", "bad \xff byte").error, "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(decode_completion_event("message", "\xC3").error,
            "malformed stream event: \xEF\xBF\xBD");
}

TEST(ParseTimings, CountsOutsideIntAreAbsent) {
  const auto s = parse_timings({{"prompt_n", 1e300}, {"cache_n", -1}, {"predicted_n", 2.5}});
  EXPECT_FALSE(s.prompt_n);
  EXPECT_FALSE(s.cache_n);
  EXPECT_FALSE(s.predicted_n);
  EXPECT_EQ(parse_timings({{"prompt_n", 2147483647}}).prompt_n, 2147483647);
}

TEST(ParseTimings, NormalisesAndKeepsRaw) {
  const nlohmann::json t = {{"cache_n", 10},
                            {"prompt_n", 1},
                            {"prompt_ms", 0.374},
                            {"predicted_n", 8},
                            {"predicted_ms", 200.0}};
  const auto s = parse_timings(t);
  EXPECT_EQ(s.cache_n, 10);
  EXPECT_EQ(s.prompt_n, 1);
  EXPECT_DOUBLE_EQ(*s.prompt_ms, 0.374);
  EXPECT_DOUBLE_EQ(*s.decode_tps, 40.0);
  EXPECT_EQ(s.raw, t);
  EXPECT_FALSE(parse_timings(nlohmann::json::object()).cache_n);
}

TEST(CompletionBody, GreedyFixedLengthStreamed) {
  CompletionSpec spec;
  spec.prompt = "hi";
  spec.max_tokens = 16;
  const auto b = completion_body(spec);
  EXPECT_EQ(b["n_predict"], 16);
  EXPECT_EQ(b["stream"], true);
  EXPECT_EQ(b["ignore_eos"], true);
  EXPECT_EQ(b["cache_prompt"], true);
  EXPECT_EQ(b["temperature"], 0.0);
}

using test_support::ScriptedTransport;

TEST(LlamaServerBackend, StreamSplitAcrossChunksGivesExactTimings) {
  ScriptedTransport t;
  // Three token events (the second carries two tokens, as when bytes of a character are held
  // back) and the final event, split mid-line.
  t.chunks = {"data: {\"content\":\"a\",\"tokens\":[5],\"stop\":false,\"tokens_predicted\":1}\n",
              "\ndata: {\"content\":\"bc\",\"tokens\":[6],\"stop\":false,\"tokens_",
              "predicted\":3}\n\ndata: {\"content\":\"d\",\"tokens\":[7],\"stop\":false,"
              "\"tokens_predicted\":4}\n\n",
              "data: {\"content\":\"\",\"stop\":true,\"tokens_predicted\":4,\"timings\":"
              "{\"cache_n\":2,\"prompt_n\":30,\"prompt_ms\":9.5,\"predicted_n\":4,"
              "\"predicted_ms\":30}}\n\n"};
  LlamaServerBackend be(t, "http://127.0.0.1:1", "secret");
  CompletionSpec spec;
  spec.prompt = "p";
  const auto r = be.complete(spec);
  EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
  EXPECT_EQ(r.trace.token_counts, (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(r.trace.token_arrivals,
            (std::vector<Nanos>{milliseconds(20), milliseconds(30), milliseconds(30)}));
  const auto d = derive_timing(r.trace);
  EXPECT_DOUBLE_EQ(*d.ttft_ms, 20.0);
  EXPECT_EQ(d.tokens, 4);
  EXPECT_EQ(r.server.cache_n, 2);
  EXPECT_EQ(t.last.url, "http://127.0.0.1:1/completion");
  ASSERT_EQ(t.last.headers.size(), 1U);
  EXPECT_EQ(t.last.headers[0].second, "Bearer secret");
}

TEST(LlamaServerBackend, StreamWithoutFinalEventIsAStreamError) {
  ScriptedTransport t;
  t.chunks = {"data: {\"content\":\"a\",\"stop\":false}\n\n"};
  LlamaServerBackend be(t, "http://x", "");
  const auto r = be.complete({});
  EXPECT_EQ(r.outcome, kvbench::Outcome::stream_error);
  EXPECT_EQ(r.trace.token_counts.size(), 1U);
}

TEST(LlamaServerBackend, ErrorEventMidStreamStopsTheCall) {
  ScriptedTransport t;
  t.chunks = {"data: {\"content\":\"a\",\"stop\":false}\n\n",
              "data: {\"error\":{\"code\":500,\"message\":\"slot died\"}}\n\n",
              "data: {\"content\":\"never\",\"stop\":false}\n\n"};
  LlamaServerBackend be(t, "http://x", "");
  const auto r = be.complete({});
  EXPECT_EQ(r.outcome, kvbench::Outcome::server_error);
  EXPECT_EQ(r.error, "slot died");
}

// A spec's watch is told of each token event as it arrives, with the tokens it carried; ending
// the stream stops the transfer there, and the call counts as answered with what it had.
TEST(LlamaServerBackend, AWatchIsToldOfEachTokenEventAndEndsTheStream) {
  ScriptedTransport t;
  t.chunks = {"data: {\"content\":\"a\",\"stop\":false,\"tokens_predicted\":1}\n\n",
              "data: {\"content\":\"bc\",\"stop\":false,\"tokens_predicted\":3}\n\n"
              "data: {\"content\":\"d\",\"stop\":false,\"tokens_predicted\":4}\n\n",
              "data: {\"content\":\"e\",\"stop\":false,\"tokens_predicted\":5}\n\n",
              "data: {\"content\":\"\",\"stop\":true,\"tokens_predicted\":5}\n\n"};
  LlamaServerBackend be(t, "http://x", "");
  std::vector<std::pair<Nanos, int>> told;
  CompletionSpec spec;
  spec.watch = [&](Nanos arrival, int tokens) {
    told.emplace_back(arrival, tokens);
    return told.size() < 2;  // ends the stream at its second token event
  };
  const auto r = be.complete(spec);
  EXPECT_EQ(r.outcome, kvbench::Outcome::ok) << r.error;
  EXPECT_TRUE(r.ended);
  EXPECT_TRUE(r.error.empty());
  ASSERT_EQ(told.size(), 2U) << "the event after the end, in the same chunk, is not told";
  EXPECT_EQ(told[0], std::pair(Nanos(milliseconds(10)), 1));
  EXPECT_EQ(told[1], std::pair(Nanos(milliseconds(20)), 2));
  EXPECT_EQ(r.trace.token_counts, (std::vector<int>{1, 2, 1})) << "decoded with its chunk";
  EXPECT_FALSE(r.server.predicted_n) << "no final event: no server figures";
  // A watch that lets it run is told of every event, and the call ends as the server ends it.
  int events = 0;
  spec.watch = [&](Nanos /*arrival*/, int /*tokens*/) { return ++events > 0; };
  const auto whole = be.complete(spec);
  EXPECT_EQ(whole.outcome, kvbench::Outcome::ok);
  EXPECT_FALSE(whole.ended);
  EXPECT_EQ(events, 4);
}

// A stream cut by anything but its watch stays the failure it was.
TEST(LlamaServerBackend, AStreamCutOtherwiseIsNotEndedByItsWatch) {
  ScriptedTransport t;
  t.chunks = {"data: {\"content\":\"a\",\"stop\":false}\n\n"};
  t.end = http::Outcome::timeout;
  LlamaServerBackend be(t, "http://x", "");
  CompletionSpec spec;
  spec.watch = [](Nanos /*arrival*/, int /*tokens*/) { return true; };
  const auto r = be.complete(spec);
  EXPECT_EQ(r.outcome, kvbench::Outcome::timeout);
  EXPECT_FALSE(r.ended);
}

TEST(LlamaServerBackend, TokenizeReadsIdsAndPieces) {
  ScriptedTransport t;
  LlamaServerBackend be(t, "http://x", "");
  EXPECT_EQ(be.tokenize("hello"), (std::vector<int>{1, 259, 68, 7}));
  EXPECT_EQ(nlohmann::json::parse(t.last.body)["add_special"], true);
}

TEST(ManagedServer, ArgvIsExplicitAndLoopbackOnly) {
  LlamaServerLaunch l;
  l.binary = "/opt/llama-server";
  l.model_path = "/m.gguf";
  l.num_ctx = 8192;
  l.cache_type = "q8_0";
  l.extra_args = {"--foo; rm -rf /", "$(id)"};
  l.api_key = "secret";
  const auto argv = llama_server_argv(l, 4321);
  const auto at = [&](const std::string& flag) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    return it == argv.end() || it + 1 == argv.end() ? std::string("<missing>") : *(it + 1);
  };
  EXPECT_EQ(argv[0], "/opt/llama-server");
  EXPECT_EQ(at("-c"), "8192");
  EXPECT_EQ(at("-np"), "1");
  EXPECT_EQ(at("-ctk"), "q8_0");
  EXPECT_EQ(at("-ctv"), "q8_0");
  EXPECT_EQ(at("-fa"), "on") << "a quantized V cache needs flash attention";
  EXPECT_EQ(at("--host"), "127.0.0.1");
  EXPECT_EQ(at("--port"), "4321");
  EXPECT_EQ(at("--cache-reuse"), "0") << "no chunk reuse after an edit";
  EXPECT_EQ(at("--cache-ram"), "8192");
  EXPECT_EQ(at("--batch-size"), "<missing>") << "the server's own batch unless set";
  EXPECT_EQ(argv[argv.size() - 2], "--foo; rm -rf /");
  EXPECT_EQ(argv.back(), "$(id)");
  for (const auto& a : argv) {
    EXPECT_EQ(a.find("secret"), std::string::npos) << "the API key never goes on the command line";
  }
}

TEST(ManagedServer, BatchSizesGoOnTheCommandLineWhereSet) {
  LlamaServerLaunch l;
  l.batch_size = 256;
  l.ubatch_size = 64;
  const auto argv = llama_server_argv(l, 4321);
  const auto b = std::find(argv.begin(), argv.end(), "--batch-size");
  const auto ub = std::find(argv.begin(), argv.end(), "--ubatch-size");
  ASSERT_TRUE(b != argv.end() && b + 1 != argv.end());
  ASSERT_TRUE(ub != argv.end() && ub + 1 != argv.end());
  EXPECT_EQ(*(b + 1), "256");
  EXPECT_EQ(*(ub + 1), "64");
  l.ubatch_size.reset();
  const auto only_batch = llama_server_argv(l, 4321);
  EXPECT_EQ(std::count(only_batch.begin(), only_batch.end(), "--ubatch-size"), 0)
      << "the micro-batch left to llama-server, which caps it at the batch";
}

TEST(LlamaServerStream, PromptProgressChunksAreNotTokens) {
  // With return_progress, llama-server streams progress before the first token (server-facts
  // §9); such a chunk carries empty content and no tokens.
  const std::string progress =
      R"({"index":0,"content":"","tokens":[],"stop":false,"id_slot":0,)"
      R"("prompt_progress":{"total":512,"cache":0,"processed":256,"time_ms":40.5}})";
  for (const auto& ev :
       {decode_completion_event("", progress), decode_completion_event_dom("", progress)}) {
    EXPECT_EQ(ev.type, CompletionEvent::Type::partial);
    EXPECT_EQ(ev.tokens, 0);
  }
}

TEST(ManagedServer, PromptCacheSettingsAreTheLastOfEachFlag) {
  LlamaServerLaunch l;
  l.binary = "llama-server";
  EXPECT_EQ(nlohmann::json(prompt_cache_settings(llama_server_argv(l, 1))),
            nlohmann::json({{"cache_reuse", 0}, {"cache_ram_mib", 8192}}));
  l.extra_args = {"--cache-reuse", "256", "-cram", "0"};
  EXPECT_EQ(nlohmann::json(prompt_cache_settings(llama_server_argv(l, 1))),
            nlohmann::json({{"cache_reuse", 256}, {"cache_ram_mib", 0}}))
      << "server.args override the pinned values";
  EXPECT_EQ(nlohmann::json(prompt_cache_settings({"llama-server"})),
            nlohmann::json({{"cache_reuse", nullptr}, {"cache_ram_mib", nullptr}}));
}

}  // namespace
}  // namespace kvbench::backend

namespace kvbench::backend {
namespace {

TEST(CompletionStream, AConversationTurnKeepsItsTextAndGeneratedIds) {
  CompletionSpec spec;
  spec.prompt = "templated";
  spec.messages = {{"user", "hi"}};
  EXPECT_EQ(completion_body(spec)["return_tokens"], true);
  spec.messages.clear();
  EXPECT_FALSE(completion_body(spec).contains("return_tokens")) << "only where it is needed";
  CompletionStream kept(true);
  kept.feed(
      "data: {\"content\":\"a\",\"tokens\":[7],\"stop\":false}\n\n"
      "data: {\"content\":\"b\",\"tokens\":[9],\"stop\":false}\n\n"
      "data: {\"content\":\"\",\"stop\":true,\"timings\":{\"prompt_n\":3,\"cache_n\":5}}\n\n",
      milliseconds(1));
  http::Result res;
  res.http_status = 200;
  const auto r = kept.finish(res);
  EXPECT_EQ(r.text, "ab");
  EXPECT_EQ(r.ids, (std::vector<int>{7, 9}));
  EXPECT_EQ(r.server.prompt_total, 8);
}

}  // namespace
}  // namespace kvbench::backend
