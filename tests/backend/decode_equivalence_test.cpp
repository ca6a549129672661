// decode_completion_event and decode_generate_line read token events without a document; their
// results must be those of the whole-document decoders for every input. Checked over a corpus of
// hand-written events and over mutations of typical ones (every truncation, every byte replaced).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/backend/llama_server.h"
#include "harness/backend/ollama.h"

namespace kvbench::backend {
namespace {

using nlohmann::json;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Empty when `a` and `b` are the same event, else what differs.
std::string difference(const CompletionEvent& a, const CompletionEvent& b) {
  std::string d;
  if (a.type != b.type) {
    d += " type";
  }
  if (a.tokens != b.tokens) {
    d += " tokens";
  }
  if (a.tokens_predicted != b.tokens_predicted) {
    d += " tokens_predicted";
  }
  if (a.error != b.error) {
    d += " error";
  }
  if (dump(a.timings) != dump(b.timings)) {
    d += " timings";
  }
  return d;
}

std::string difference(const GenerateEvent& a, const GenerateEvent& b) {
  std::string d;
  if (a.type != b.type) {
    d += " type";
  }
  if (a.has_token != b.has_token) {
    d += " has_token";
  }
  if (a.error != b.error) {
    d += " error";
  }
  if (dump(a.message) != dump(b.message)) {
    d += " message";
  }
  return d;
}

void expect_same_completion_event(std::string_view name, std::string_view data) {
  EXPECT_EQ(
      difference(decode_completion_event(name, data), decode_completion_event_dom(name, data)), "")
      << "event " << name << ": " << data;
}

void expect_same_generate_line(std::string_view line) {
  EXPECT_EQ(difference(decode_generate_line(line), decode_generate_line_dom(line)), "") << line;
}

// Every truncation of `text`, and `text` with each byte replaced by each of a few that matter to
// JSON (or deleted).
std::vector<std::string> mutations(std::string_view text) {
  static constexpr std::string_view kBytes = "\"{}[],:01-.ex\\ \xff";
  std::vector<std::string> out;
  for (std::size_t n = 0; n < text.size(); ++n) {
    out.emplace_back(text.substr(0, n));
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string deleted(text);
    deleted.erase(i, 1);
    out.push_back(std::move(deleted));
    for (const char c : kBytes) {
      std::string s(text);
      s[i] = c;
      out.push_back(std::move(s));
    }
  }
  return out;
}

const std::vector<std::string> kCompletionData = {
    // token events as llama-server sends them
    R"({"index":0,"content":" the","tokens":[279],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":12})",
    R"({"content":"ab","tokens":[1,2,3],"stop":false,"tokens_predicted":7})",
    R"({"content":"x","tokens":[],"stop":false})",
    R"({"content":"","tokens":[],"stop":false,"tokens_predicted":4})",
    R"({"content":"ab"})",
    R"({})",
    R"({"index":0})",
    // "tokens" missing, not an array, or holding anything
    R"({"tokens":5,"content":"a"})",
    R"({"tokens":"abc","content":""})",
    R"({"tokens":{"a":1},"content":"a"})",
    R"({"tokens":null})",
    R"({"tokens":[1.5,"x",null,[1,2],{"a":[3]},true]})",
    R"({"tokens":[[1,2,3]],"content":"abc"})",
    R"({"tokens":[-1,18446744073709551615,1e300]})",
    // "content" that is not a string
    R"({"content":5})",
    R"({"content":null,"tokens":[]})",
    R"({"content":[],"tokens":[]})",
    R"({"content":{"a":"b"}})",
    // tokens_predicted of every kind
    R"({"tokens_predicted":-1})",
    R"({"tokens_predicted":0})",
    R"({"tokens_predicted":2147483647})",
    R"({"tokens_predicted":2147483648})",
    R"({"tokens_predicted":-2147483648})",
    R"({"tokens_predicted":1.5})",
    R"({"tokens_predicted":3.0})",
    R"({"tokens_predicted":3e0})",
    R"({"tokens_predicted":1e300})",
    R"({"tokens_predicted":-0.0})",
    R"({"tokens_predicted":-0})",
    R"({"tokens_predicted":"5"})",
    R"({"tokens_predicted":null})",
    R"({"tokens_predicted":true})",
    R"({"tokens_predicted":[5]})",
    R"({"tokens_predicted":18446744073709551615})",
    R"({"tokens_predicted":99999999999999999999999})",
    R"({"tokens_predicted":-9223372036854775808})",
    R"({"tokens_predicted":1e400})",
    // "stop" of every kind, and repeated members (a document keeps the last)
    R"({"content":"a","stop":true})",
    R"({"content":"a","stop":"yes"})",
    R"({"content":"a","stop":"true"})",
    R"({"content":"a","stop":1})",
    R"({"content":"a","stop":null})",
    R"({"content":"a","stop":[true]})",
    R"({"content":"a","stop":{"x":true}})",
    R"({"content":"a","stop":true,"stop":false})",
    R"({"content":"a","stop":false,"stop":true})",
    R"({"tokens":[1],"tokens":[1,2]})",
    R"({"tokens":[1,2],"tokens":7,"content":"a"})",
    R"({"content":"","content":"a"})",
    R"({"tokens_predicted":1,"tokens_predicted":2})",
    R"({"index":0,"index":1,"content":"a"})",
    // final events
    R"({"content":"","tokens":[],"stop":true,"timings":{"cache_n":2,"prompt_n":9}})",
    R"({"stop":true,"timings":5})",
    R"({"stop":true})",
    R"({"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"m.gguf","tokens_predicted":256,"tokens_evaluated":512,"generation_settings":{"n_predict":256,"seed":42,"temperature":0.0},"prompt":"","stop_type":"limit","timings":{"cache_n":0,"prompt_n":512,"prompt_ms":181.2,"predicted_n":256,"predicted_ms":1980.5,"predicted_per_second":129.26028780610956}})",
    // errors, and "error" only where it is a top-level member
    R"({"error":{"code":500,"message":"boom","type":"server_error"}})",
    R"({"error":"plain"})",
    R"({"error":""})",
    R"({"error":null})",
    R"({"error":[1,"\u00e9"]})",
    R"({"content":"a","tokens":[1],"error":"late"})",
    R"({"content":"a","tokens":[1],"stop":true,"error":"both"})",
    R"({"x":{"error":"nested"},"content":"a","tokens":[1]})",
    R"({"timings":{"stop":true},"y":[{"tokens":[1,2,3]}],"tokens":[1]})",
    // escapes and unicode
    R"({"content":"\u00e9","tokens":[1]})",
    R"({"content":"\ud83d\ude00"})",
    R"({"content":"\ud83d"})",
    R"({"content":"\u0000"})",
    R"({"content":"\"\\\/\b\f\n\r\t"})",
    R"({"\u0073top":true,"content":"a"})",
    R"({"\u0074okens":[1,2],"tokens":[1]})",
    R"({"\u0065rror":"escaped key"})",
    "{\"content\":\"\xc3\xa9\"}",
    "{\"content\":\"\xff\"}",
    "{\"content\":\"\xc3\"}",
    "{\"content\":\"a\x01\"}",
    "\xEF\xBB\xBF{\"content\":\"a\"}",
    std::string("{\"content\":\"a\"}\0", 16),
    // nested unknown members, whitespace
    R"({"a":{"b":[{"c":[[[]]]}],"d":{"e":{"f":null}}},"content":"x","tokens":[1],"g":[{},[],"",0]})",
    " \t\r\n{ \"content\" : \"a\" , \"tokens\" : [ 1 , 2 ] , \"stop\" : false } \n",
    // not objects, malformed
    "",
    " ",
    "[]",
    R"([{"content":"a"}])",
    "1",
    R"("text")",
    "null",
    "true",
    "{",
    "}",
    R"({"content":"a",})",
    R"({"content":"a"}})",
    R"({"content":"a"} x)",
    R"({"content":"a"}{"content":"b"})",
    R"({"content" "a"})",
    R"({content:"a"})",
    R"({"content":'a'})",
    R"({"content":"a" /* c */})",
    R"({"tokens":[1,]})",
    R"({"tokens":[01]})",
    R"({"tokens_predicted":+1})",
    R"({"tokens_predicted":.5})",
    R"({"tokens_predicted":NaN})",
    "[DONE]",
    " [DONE]",
    "[DONE] ",
};

TEST(DecodeEquivalence, CompletionEventCorpus) {
  for (const auto& data : kCompletionData) {
    for (const std::string_view name : {"message", "error", "", "completion"}) {
      expect_same_completion_event(name, data);
    }
  }
}

TEST(DecodeEquivalence, CompletionEventLongTokenArray) {
  std::string data = R"({"content":"a","tokens":[)";
  for (int i = 0; i < 1000; ++i) {
    if (i > 0) {
      data += ',';
    }
    data += std::to_string(i);
  }
  data += R"(],"stop":false,"tokens_predicted":1000})";
  expect_same_completion_event("message", data);
  EXPECT_EQ(decode_completion_event("message", data).tokens, 1000);
}

TEST(DecodeEquivalence, CompletionEventMutations) {
  for (
      const std::string_view seed :
      {R"({"index":0,"content":" the","tokens":[279],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":12})",
       R"({"content":"","tokens":[],"stop":true,"timings":{"cache_n":2}})",
       R"({"error":{"message":"x"},"tokens":[1,2]})",
       R"({"x":[{"y":"\u00e9"}],"tokens":[1,[2]],"content":"a"})"}) {
    for (const auto& data : mutations(seed)) {
      expect_same_completion_event("message", data);
    }
  }
}

// The fast path reads what the document path reads for the events it takes.
TEST(DecodeEquivalence, CompletionEventValues) {
  const auto many =
      decode_completion_event("message", R"({"tokens":[1,2,3],"tokens_predicted":9})");
  EXPECT_EQ(many.type, CompletionEvent::Type::partial);
  EXPECT_EQ(many.tokens, 3);
  EXPECT_EQ(many.tokens_predicted, 9);
  EXPECT_EQ(decode_completion_event("message", R"({"tokens":[],"content":"a"})").tokens, 1);
  EXPECT_EQ(decode_completion_event("message", R"({"tokens":7,"content":""})").tokens, 0);
  EXPECT_EQ(decode_completion_event("message", R"({"stop":"yes","content":"a"})").type,
            CompletionEvent::Type::partial);
  EXPECT_EQ(decode_completion_event("message", R"({"tokens":[1],"tokens":[1,2]})").tokens, 2);
  EXPECT_EQ(decode_completion_event("message", R"({"stop":true,"stop":false})").type,
            CompletionEvent::Type::partial);
  EXPECT_EQ(decode_completion_event("message", R"({"stop":false,"stop":true})").type,
            CompletionEvent::Type::final);
  EXPECT_EQ(decode_completion_event("message", R"({"x":{"error":"no"},"content":"a"})").type,
            CompletionEvent::Type::partial);
}

const std::vector<std::string> kGenerateLines = {
    R"({"model":"m:q8_0","created_at":"2026-08-30T03:10:00.100000Z","response":" the","done":false})",
    R"({"response":"","done":false})",
    R"({"done":false})",
    R"({"response":5,"done":false})",
    R"({"response":null,"done":false})",
    R"({"response":[],"done":false})",
    R"({"response":{"a":"b"},"done":false})",
    R"({"response":"\u00e9","done":false})",
    R"({"response":"\ud83d","done":false})",
    "{\"response\":\"\xff\",\"done\":false}",
    R"({"response":"a"})",
    R"({"response":"a","done":"false"})",
    R"({"response":"a","done":0})",
    R"({"response":"a","done":null})",
    R"({"response":"a","done":[false]})",
    R"({"response":"a","done":true})",
    R"({"response":"a","done":true,"done":false})",
    R"({"response":"a","done":false,"done":true})",
    R"({"response":"","response":"a","done":false})",
    R"({"response":"a","response":"","done":false})",
    R"({"\u0064one":false,"response":"a"})",
    R"({"response":"","done":true,"done_reason":"length","context":[1,2,3],"eval_count":2,"eval_duration":14000000})",
    R"({"done":true,"context":"x"})",
    R"({"error":"model not found"})",
    R"({"error":{"message":"nested"},"done":false})",
    R"({"response":"a","done":false,"error":""})",
    R"({"x":{"error":"no","done":true},"response":"a","done":false})",
    R"({"message":{"role":"assistant","content":"a"},"done":false})",
    " {\"response\" : \"a\" , \"done\" : false } \r",
    "",
    "[]",
    "1",
    "null",
    R"({"response":"a","done":false)",
    R"({"response":"a","done":false}})",
    R"({"response":"a","done":false} {})",
    R"({"response":"a","done":fals})",
};

TEST(DecodeEquivalence, GenerateLineCorpus) {
  for (const auto& line : kGenerateLines) {
    expect_same_generate_line(line);
  }
}

TEST(DecodeEquivalence, GenerateLineMutations) {
  for (
      const std::string_view seed :
      {R"({"model":"m:q8_0","created_at":"2026-08-30T03:10:00.100000Z","response":" the","done":false})",
       R"({"response":"","done":true,"context":[1,2],"eval_count":2})",
       R"({"error":"x","done":false,"y":[{"z":1}]})"}) {
    for (const auto& line : mutations(seed)) {
      expect_same_generate_line(line);
    }
  }
}

TEST(DecodeEquivalence, GenerateLineValues) {
  const auto token = decode_generate_line(R"({"response":"a","done":false})");
  EXPECT_EQ(token.type, GenerateEvent::Type::partial);
  EXPECT_TRUE(token.has_token);
  EXPECT_FALSE(decode_generate_line(R"({"response":"","done":false})").has_token);
  EXPECT_EQ(decode_generate_line(R"({"response":"a","done":0})").type, GenerateEvent::Type::error);
  EXPECT_EQ(decode_generate_line(R"({"done":false,"done":true})").type, GenerateEvent::Type::final);
}

}  // namespace
}  // namespace kvbench::backend
