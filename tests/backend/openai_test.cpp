#include "harness/backend/openai.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/backend/anthropic.h"
#include "harness/core/error.h"
#include "tests/support/scripted_transport.h"

namespace kvbench::backend {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using test_support::ScriptedTransport;

// A streamed chat completion as llama-server sends it: the role-only delta first, two content
// deltas, the finish chunk, the usage chunk with cached tokens and llama-server's timings.
const std::string kChat =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":65,\"completion_tokens\":2,"
    "\"total_tokens\":67,\"prompt_tokens_details\":{\"cached_tokens\":64}},"
    "\"timings\":{\"cache_n\":64,\"prompt_n\":1,\"prompt_ms\":2.5,\"predicted_n\":2,"
    "\"predicted_ms\":8}}\n\n"
    "data: [DONE]\n\n";

// A hosted shape: usage only in the last chunk, no timings, reasoning deltas before the answer.
const std::string kHosted =
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":null}\n\n"
    "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}],\"usage\":null}\n\n"
    "data: {\"choices\":[{\"delta\":{\"reasoning\":\"more\"}}],\"usage\":null}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"usage\":null}\n\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2048,\"completion_tokens\":3,"
    "\"prompt_tokens_details\":{\"cached_tokens\":1920}}}\n\n"
    "data: [DONE]\n\n";

// Feeds `text` cut at `cut` (two chunks, 10 ms apart) into a fresh decoder.
CallResult decode_cut(StreamDecoder& d, const std::string& text, std::size_t cut) {
  d.feed(std::string_view(text).substr(0, cut), milliseconds(10));
  d.feed(std::string_view(text).substr(cut), milliseconds(20));
  http::Result res;
  res.http_status = 200;
  res.finished = milliseconds(30);
  return d.finish(res);
}

// Feeds `text` one event per 10 ms.
CallResult decode_events(StreamDecoder& d, const std::string& text) {
  std::size_t pos = 0;
  int i = 0;
  while (pos < text.size()) {
    const auto end = text.find("\n\n", pos) + 2;
    d.feed(std::string_view(text).substr(pos, end - pos), milliseconds(10 * ++i));
    pos = end;
  }
  http::Result res;
  res.http_status = 200;
  res.finished = milliseconds(10 * (i + 1));
  return d.finish(res);
}

TEST(OpenAiStream, RoleChunkIsNotTheFirstTokenAndUsageCarriesTheCacheProof) {
  OpenAiStream d;
  const auto r = decode_events(d, kChat);
  EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
  const auto t = derive_timing(r.trace);
  EXPECT_DOUBLE_EQ(*t.first_event_ms, 10.0);  // the role chunk
  EXPECT_DOUBLE_EQ(*t.ttft_ms, 20.0);         // the first content delta
  EXPECT_EQ(t.tokens, 2);
  EXPECT_EQ(r.server.cache_n, 64);
  EXPECT_EQ(r.server.prompt_n, 1);
  EXPECT_DOUBLE_EQ(*r.server.prompt_ms, 2.5);
  EXPECT_EQ(r.server.raw["usage"]["prompt_tokens"], 65);
  EXPECT_TRUE(r.server.raw.contains("timings"));
}

TEST(OpenAiStream, HostedUsageWithoutTimingsAndReasoningTimedApart) {
  OpenAiStream d;
  const auto r = decode_events(d, kHosted);
  ASSERT_EQ(r.outcome, kvbench::Outcome::ok) << r.error;
  const auto t = derive_timing(r.trace);
  EXPECT_DOUBLE_EQ(*t.first_reasoning_ms, 20.0);
  EXPECT_EQ(t.reasoning_tokens, 2);
  EXPECT_DOUBLE_EQ(*t.ttft_ms, 40.0);
  EXPECT_EQ(t.tokens, 1);
  EXPECT_EQ(r.server.cache_n, 1920);
  EXPECT_EQ(r.server.prompt_n, 128);
  EXPECT_EQ(r.server.predicted_n, 3);
  EXPECT_FALSE(r.server.prompt_ms);
}

TEST(OpenAiStream, EverySplitDecodesAsTheWholeStream) {
  for (const auto* text : {&kChat, &kHosted}) {
    OpenAiStream whole;
    const auto ref = decode_cut(whole, *text, text->size());
    for (std::size_t cut = 0; cut <= text->size(); ++cut) {
      OpenAiStream d;
      const auto r = decode_cut(d, *text, cut);
      ASSERT_EQ(r.outcome, ref.outcome) << cut;
      ASSERT_EQ(derive_timing(r.trace).tokens, derive_timing(ref.trace).tokens) << cut;
      ASSERT_EQ(r.trace.reasoning_tokens, ref.trace.reasoning_tokens) << cut;
      ASSERT_EQ(r.server.cache_n, ref.server.cache_n) << cut;
      ASSERT_EQ(r.server.prompt_n, ref.server.prompt_n) << cut;
    }
  }
}

TEST(OpenAiStream, CompletionsTextChunksAreTokens) {
  OpenAiStream d;
  const auto r = decode_events(
      d,
      "data: {\"choices\":[{\"text\":\"a\",\"index\":0}]}\n\n"
      "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1}}\n\n"
      "data: [DONE]\n\n");
  EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
  EXPECT_EQ(derive_timing(r.trace).tokens, 1);
  EXPECT_EQ(r.server.prompt_n, 9);
  EXPECT_FALSE(r.server.cache_n);  // not reported: no proof, and none invented
}

TEST(OpenAiStream, ErrorMidStreamAndMissingEndAreFailures) {
  OpenAiStream e;
  const auto err =
      decode_events(e,
                    "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                    "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n");
  EXPECT_EQ(err.outcome, kvbench::Outcome::server_error);
  EXPECT_EQ(err.error, "overloaded");
  OpenAiStream m;
  const auto cut = decode_events(m, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n");
  EXPECT_EQ(cut.outcome, kvbench::Outcome::stream_error);
  OpenAiStream b;
  EXPECT_EQ(decode_events(b, "data: {\"choices\":\n\n").outcome, kvbench::Outcome::server_error);
}

TEST(OpenAiStream, RefusedCallsSayHttpStatusAndAreNotRetried) {
  OpenAiStream d;
  http::Result res;
  res.outcome = http::Outcome::http_error;
  res.http_status = 429;
  res.error = "rate limit";
  const auto r = d.finish(res);
  EXPECT_EQ(r.outcome, kvbench::Outcome::http_error);
  EXPECT_EQ(r.error, "refused: HTTP 429 (rate limit); not retried");
  OpenAiStream later;
  res.http_status = 503;
  res.retry_after = "30";
  EXPECT_EQ(later.finish(res).error,
            "refused: HTTP 503 (rate limit), Retry-After: 30; not retried");
}

TEST(OpenAiBody, StreamedWithUsageAndLlamaExtensionsOnlyForLlamaServer) {
  OpenAiTarget t{"http://h/v1", "m", "", OpenAiEndpoint::chat, false};
  CompletionSpec spec;
  spec.prompt = "hello";
  spec.max_tokens = 7;
  auto b = openai_body(t, spec);
  EXPECT_EQ(b["messages"][0]["content"], "hello");
  EXPECT_EQ(b["stream_options"]["include_usage"], true);
  EXPECT_EQ(b["max_tokens"], 7);
  EXPECT_FALSE(b.contains("id_slot"));
  EXPECT_FALSE(b.contains("prompt"));
  t.endpoint = OpenAiEndpoint::completions;
  t.llama_server = true;
  b = openai_body(t, spec);
  EXPECT_EQ(b["prompt"], "hello");
  EXPECT_EQ(b["id_slot"], 0);
  EXPECT_EQ(b["ignore_eos"], true);
  EXPECT_EQ(root_of("http://h:8/v1"), "http://h:8");
  EXPECT_EQ(root_of("http://h:8/v1/"), "http://h:8");
  EXPECT_EQ(root_of("http://h:8"), "http://h:8");
}

TEST(OpenAiBackend, KeyGoesInTheHeaderOnlyAndTheRequestNamesTheEndpoint) {
  ScriptedTransport tr;
  tr.chunks = {kChat};
  OpenAiBackend be(tr, {"http://h/v1", "m", "sk-planted", OpenAiEndpoint::chat, false});
  const auto r = be.complete({});
  EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
  EXPECT_EQ(tr.last.url, "http://h/v1/chat/completions");
  EXPECT_EQ(tr.last.body.find("sk-planted"), std::string::npos);
  ASSERT_EQ(tr.last.headers.size(), 1U);
  EXPECT_EQ(tr.last.headers[0].second, "Bearer sk-planted");
  EXPECT_TRUE(be.tokenize("x").empty());
  EXPECT_THROW(be.count_tokens("x"), Error);  // no tokenizer, not calibrated
}

// vLLM's /tokenize at the root: the chat template applied by the server, the ids counted.
TEST(OpenAiBackend, VllmTokenizeEndpointGivesTheTemplatedIds) {
  ScriptedTransport tr;
  tr.fetch_body = R"({"count": 3, "max_model_len": 8192, "tokens": [151644, 872, 198]})";
  OpenAiBackend be(tr, {"http://h:8000/v1", "m", "sk-planted", OpenAiEndpoint::chat, false, true});
  EXPECT_EQ(be.tokenize("hello"), (std::vector<int>{151644, 872, 198}));
  EXPECT_EQ(tr.last.url, "http://h:8000/tokenize");
  const json body = json::parse(tr.last.body);
  EXPECT_EQ(body["messages"][0]["content"], "hello");
  EXPECT_EQ(body["add_generation_prompt"], true);
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(be.count_tokens("hello"), 3);
  EXPECT_TRUE(be.capabilities().token_ids);
  EXPECT_FALSE(be.capabilities().slot_pinning);
  OpenAiBackend plain(tr, {"http://h:8000/v1", "m", "", OpenAiEndpoint::completions, false, true});
  static_cast<void>(plain.tokenize("hi"));
  EXPECT_EQ(json::parse(tr.last.body)["prompt"], "hi");
  tr.fetch_body = R"({"count": 2, "tokens": [1]})";
  EXPECT_THROW(be.tokenize("x"), Error) << "a count that disagrees with the ids";
  EXPECT_FALSE(vllm_tokens(R"({"tokens": [1, "a"]})"));
  EXPECT_FALSE(vllm_tokens(R"({"detail": "Not Found"})"));
  EXPECT_FALSE(vllm_tokens("not json"));
  EXPECT_EQ(vllm_tokens(R"({"tokens": []})")->size(), 0U);
}

// Anthropic's Messages stream: usage in message_start and message_delta, text and thinking
// deltas, pings, message_stop.
const std::string kMessages =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\","
    "\"usage\":{\"input_tokens\":5,\"cache_creation_input_tokens\":0,"
    "\"cache_read_input_tokens\":1100,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"!\"}}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"max_tokens\"},\"usage\":{\"output_tokens\":2}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

TEST(AnthropicStream, UsageOfStartAndEndAndTextDeltasAsTokens) {
  AnthropicStream d;
  const auto r = decode_events(d, kMessages);
  ASSERT_EQ(r.outcome, kvbench::Outcome::ok) << r.error;
  const auto t = derive_timing(r.trace);
  EXPECT_DOUBLE_EQ(*t.first_event_ms, 10.0);
  EXPECT_DOUBLE_EQ(*t.first_reasoning_ms, 40.0);
  EXPECT_DOUBLE_EQ(*t.ttft_ms, 50.0);
  EXPECT_EQ(t.tokens, 2);
  EXPECT_EQ(r.server.cache_n, 1100);
  EXPECT_EQ(r.server.prompt_n, 5);
  EXPECT_EQ(r.server.predicted_n, 2);
}

TEST(AnthropicStream, EverySplitDecodesAsTheWholeStream) {
  AnthropicStream whole;
  const auto ref = decode_cut(whole, kMessages, kMessages.size());
  for (std::size_t cut = 0; cut <= kMessages.size(); ++cut) {
    AnthropicStream d;
    const auto r = decode_cut(d, kMessages, cut);
    ASSERT_EQ(r.outcome, ref.outcome) << cut;
    ASSERT_EQ(derive_timing(r.trace).tokens, 2) << cut;
    ASSERT_EQ(r.server.cache_n, 1100) << cut;
  }
}

TEST(AnthropicStream, OverloadedErrorEventEndsTheCall) {
  AnthropicStream d;
  const auto r = decode_events(
      d,
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\n"
      "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
      "\"message\":\"Overloaded\"}}\n\n");
  EXPECT_EQ(r.outcome, kvbench::Outcome::server_error);
  EXPECT_EQ(r.error, "overloaded_error: Overloaded");
  AnthropicStream m;
  EXPECT_EQ(decode_events(m, kMessages.substr(0, kMessages.find("event: message_stop"))).outcome,
            kvbench::Outcome::stream_error);
}

TEST(AnthropicBody, BreakpointMarksTheUserMessageForCaching) {
  CompletionSpec spec;
  spec.prompt = "long prompt";
  AnthropicTarget t{"http://h/v1", "claude", "", false, false};
  EXPECT_EQ(anthropic_body(t, spec)["messages"][0]["content"], "long prompt");
  t.breakpoint_at_end = true;
  const auto content = anthropic_body(t, spec)["messages"][0]["content"];
  ASSERT_TRUE(content.is_array());
  EXPECT_EQ(content[0]["text"], "long prompt");
  EXPECT_EQ(content[0]["cache_control"]["type"], "ephemeral");
}

TEST(AnthropicBackend, HeadersCarryVersionAndKeyNeverTheBody) {
  ScriptedTransport tr;
  tr.chunks = {kMessages};
  AnthropicBackend be(tr, {"http://h/v1", "claude", "sk-ant-planted", false});
  const auto r = be.complete({});
  EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
  EXPECT_EQ(tr.last.url, "http://h/v1/messages");
  EXPECT_EQ(tr.last.body.find("sk-ant-planted"), std::string::npos);
  EXPECT_THAT(tr.last.headers, ::testing::Contains(std::pair<std::string, std::string>(
                                   "x-api-key", "sk-ant-planted")));
  EXPECT_THAT(tr.last.headers, ::testing::Contains(std::pair<std::string, std::string>(
                                   "anthropic-version", "2023-06-01")));
  tr.fetch_body = R"({"input_tokens": 42})";
  EXPECT_EQ(be.count_tokens("hello"), 42);
  EXPECT_EQ(tr.last.url, "http://h/v1/messages/count_tokens");
}

}  // namespace
}  // namespace kvbench::backend

namespace kvbench::backend {
namespace {

TEST(ConversationRequests, ChatKindsSendTheMessagesAndKeepTheAnswer) {
  CompletionSpec spec;
  spec.messages = {{"system", "be brief"}, {"user", "hi"}, {"assistant", "hello"}, {"user", "?"}};
  spec.max_tokens = 4;
  OpenAiTarget openai{"http://h/v1", "m", "", OpenAiEndpoint::chat, true, false};
  const json o = openai_body(openai, spec);
  ASSERT_EQ(o["messages"].size(), 4U);
  EXPECT_EQ(o["messages"][2], (json{{"role", "assistant"}, {"content", "hello"}}));
  AnthropicTarget anthropic;
  anthropic.model = "m";
  anthropic.breakpoint_at_end = true;
  const json a = anthropic_body(anthropic, spec);
  EXPECT_EQ(a["system"], "be brief") << "the Messages API takes the system prompt apart";
  ASSERT_EQ(a["messages"].size(), 3U);
  EXPECT_EQ(a["messages"][1]["content"], "hello");
  EXPECT_EQ(a["messages"][2]["content"][0]["cache_control"]["type"], "ephemeral")
      << "the breakpoint on the last user message";
  OpenAiStream d;
  EXPECT_EQ(decode_events(d, kChat).text, "ab");
  AnthropicStream s;
  const std::string messages =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
      "{\"input_tokens\":5,\"cache_read_input_tokens\":7}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":"
      "{\"type\":\"text_delta\",\"text\":\"x y\"}}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":2}}"
      "\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  const auto r = decode_events(s, messages);
  EXPECT_EQ(r.text, "x y");
  EXPECT_EQ(r.server.prompt_total, 12) << "input and cache reads together";
}

}  // namespace
}  // namespace kvbench::backend
