// The pure half of the Ollama backend: request bodies, NDJSON stream decoding of recordings cut
// at arbitrary byte boundaries (including a mid-stream error line and omitted fields), metrics,
// the token calibration, the model shape from /api/show and the managed `ollama serve` launch.

#include "harness/backend/ollama.h"

#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/servers/ollama_serve.h"
#include "tests/http/chunking.h"
#include "tests/support/scripted_transport.h"

namespace kvbench::backend {
namespace {

using http::test_support::chunk_index;
using http::test_support::cut;
using http::test_support::LineEnding;
using http::test_support::map_offset;
using http::test_support::random_cuts;
using http::test_support::read_recording;
using http::test_support::with_line_ending;
using nlohmann::json;
using servers::ollama_serve_launch;  // how a managed ollama serve is started (harness/servers)
using servers::OllamaServeConfig;

// Feeds the chunks (chunk i arrives at Nanos{i}) the way complete() does: it stops feeding once
// feed() returns false.
GenerateStreamDecoder decode(const std::vector<std::string_view>& chunks) {
  GenerateStreamDecoder d;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (!d.feed(chunks[i], Nanos{static_cast<long>(i)})) {
      break;
    }
  }
  d.finish();
  return d;
}

// The offset of the '\n' that ends line `n` (0-based) of `text`.
std::size_t end_of_line(std::string_view text, int n) {
  std::size_t at = text.find('\n');
  for (int i = 0; i < n; ++i) {
    at = text.find('\n', at + 1);
  }
  return at;
}

void expect_complete_stream(const GenerateStreamDecoder& d, const std::vector<std::size_t>& cuts,
                            std::string_view text, LineEnding ending, std::string_view lf) {
  ASSERT_TRUE(d.error().empty()) << d.error();
  ASSERT_TRUE(d.final_seen());
  ASSERT_EQ(d.trace().token_arrivals.size(), 8U);
  for (int i = 0; i < 8; ++i) {
    const std::size_t nl = map_offset(lf, end_of_line(lf, i), ending);
    // The arrival is that of the chunk holding the line's last byte ('\n', or "\r\n"'s '\n').
    const std::size_t last = ending == LineEnding::crlf ? nl + 1 : nl;
    EXPECT_EQ(d.trace().token_arrivals[static_cast<std::size_t>(i)].count(),
              chunk_index(cuts, last))
        << "token " << i;
  }
  EXPECT_EQ(d.server().prompt_n, 12);
  EXPECT_DOUBLE_EQ(*d.server().prompt_ms, 30.112);
  EXPECT_EQ(d.server().predicted_n, 8);
  EXPECT_DOUBLE_EQ(*d.server().predicted_ms, 61.875);
  EXPECT_FALSE(d.server().cache_n);
  EXPECT_EQ(d.server().raw["load_duration"], 10226043);
  EXPECT_EQ(d.server().raw["done_reason"], "length");
  EXPECT_FALSE(d.server().raw.contains("context"));
  (void)text;
}

TEST(GenerateStreamDecoder, RecordingCutAtEveryOffsetDecodesTheSame) {
  const std::string lf = read_recording("ollama_generate.ndjson");
  for (const auto ending : {LineEnding::lf, LineEnding::crlf}) {
    const std::string text = with_line_ending(lf, ending);
    for (std::size_t at = 0; at <= text.size(); ++at) {
      const std::vector<std::size_t> cuts{at};
      SCOPED_TRACE(::testing::Message() << "cut at " << at);
      expect_complete_stream(decode(cut(text, cuts)), cuts, text, ending, lf);
    }
  }
}

TEST(GenerateStreamDecoder, RecordingCutAtRandomOffsetsDecodesTheSame) {
  const std::string lf = read_recording("ollama_generate.ndjson");
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const auto ending = trial % 2 == 0 ? LineEnding::lf : LineEnding::crlf;
    const std::string text = with_line_ending(lf, ending);
    const auto cuts = random_cuts(text.size(), rng);
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    expect_complete_stream(decode(cut(text, cuts)), cuts, text, ending, lf);
  }
}

TEST(GenerateStreamDecoder, MidStreamErrorLineIsTheOutcomeWhereverTheCutsFall) {
  const std::string text = read_recording("ollama_generate_error.ndjson");
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const auto cuts = trial < static_cast<int>(text.size()) + 1
                          ? std::vector<std::size_t>{static_cast<std::size_t>(trial)}
                          : random_cuts(text.size(), rng);
    const auto d = decode(cut(text, cuts));
    EXPECT_EQ(d.error(),
              "an error was encountered while running the model: llama-server process has "
              "terminated: signal: killed");
    EXPECT_FALSE(d.final_seen());
    EXPECT_EQ(d.trace().token_arrivals.size(), 3U);
  }
}

TEST(GenerateStreamDecoder, OmittedMetricsStayAbsent) {
  const std::string text = read_recording("ollama_generate_omitted.ndjson");
  std::mt19937 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    const auto d = decode(cut(text, random_cuts(text.size(), rng)));
    ASSERT_TRUE(d.final_seen());
    EXPECT_EQ(d.trace().token_arrivals.size(), 2U) << "an empty response carries no token";
    EXPECT_EQ(d.server().prompt_n, 40);
    EXPECT_FALSE(d.server().prompt_ms) << "prompt_eval_duration was omitted, not zero";
    EXPECT_FALSE(d.server().raw.contains("load_duration"));
    EXPECT_EQ(d.server().predicted_n, 2);
    EXPECT_DOUBLE_EQ(*d.server().predicted_ms, 14.0);
    EXPECT_DOUBLE_EQ(*d.server().decode_tps, 2 / 0.014);
  }
}

TEST(ParseOllamaMetrics, CachedCountIsTheReuseWherePresent) {
  const auto newer = parse_ollama_metrics(nlohmann::json::parse(
      R"({"prompt_eval_count": 2000, "prompt_eval_cached_count": 1500, "eval_count": 4})"));
  EXPECT_EQ(newer.prompt_n, 2000) << "prompt_eval_count stays the whole prompt";
  EXPECT_EQ(newer.cache_n, 1500);
  EXPECT_EQ(newer.raw["prompt_eval_cached_count"], 1500);
  const auto zero = parse_ollama_metrics(
      nlohmann::json::parse(R"({"prompt_eval_count": 64, "prompt_eval_cached_count": 0})"));
  EXPECT_EQ(zero.cache_n, 0) << "a reported 0 is a proof of a cold read";
  const auto older = parse_ollama_metrics(nlohmann::json::parse(R"({"prompt_eval_count": 64})"));
  EXPECT_FALSE(older.cache_n) << "older servers report no reuse";
  const auto bad = parse_ollama_metrics(
      nlohmann::json::parse(R"({"prompt_eval_count": 64, "prompt_eval_cached_count": -3})"));
  EXPECT_FALSE(bad.cache_n);
}

TEST(GenerateStreamDecoder, TruncatedStreamHasNoFinalLine) {
  const std::string text = read_recording("ollama_generate.ndjson");
  const auto d = decode({std::string_view(text).substr(0, end_of_line(text, 2) + 1)});
  EXPECT_FALSE(d.final_seen());
  EXPECT_TRUE(d.error().empty());
  EXPECT_EQ(d.trace().token_arrivals.size(), 3U);
}

TEST(GenerateStreamDecoder, ResultCarriesTheTransportTimesAndTheStream) {
  const std::string text = read_recording("ollama_generate.ndjson");
  GenerateStreamDecoder d;
  d.feed(text, Nanos{5});
  http::Result res;
  res.http_status = 200;
  res.started = Nanos{1};
  res.first_byte = Nanos{4};
  res.finished = Nanos{9};
  const CallResult r = d.result(res);
  EXPECT_EQ(r.outcome, kvbench::Outcome::ok);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.trace.sent, Nanos{1});
  EXPECT_EQ(r.trace.first_byte, Nanos{4});
  EXPECT_EQ(r.trace.done, Nanos{9});
  EXPECT_EQ(r.trace.token_arrivals.size(), 8U);
  EXPECT_EQ(r.server.prompt_n, 12);
}

TEST(GenerateStreamDecoder, FullQueueIsAnHttpErrorWithItsStatusAndMessage) {
  // A 503 body never reaches the decoder: the transport collects it.
  GenerateStreamDecoder d;
  http::Result res;
  res.outcome = http::Outcome::http_error;
  res.http_status = 503;
  res.error = "server busy, please try again.  maximum pending requests exceeded";
  const CallResult r = d.result(res);
  EXPECT_EQ(r.outcome, kvbench::Outcome::http_error);
  EXPECT_EQ(r.http_status, 503);
  EXPECT_EQ(r.error, res.error);
  EXPECT_TRUE(r.trace.token_arrivals.empty());
}

TEST(GenerateStreamDecoder, ResultWithoutAFinalLineIsAStreamError) {
  const std::string text = read_recording("ollama_generate.ndjson");
  GenerateStreamDecoder d;
  d.feed(std::string_view(text).substr(0, end_of_line(text, 2) + 1), Nanos{1});
  http::Result res;
  res.http_status = 200;
  const CallResult r = d.result(res);
  EXPECT_EQ(r.outcome, kvbench::Outcome::stream_error);
  EXPECT_EQ(r.trace.token_arrivals.size(), 3U);
}

TEST(DecodeGenerateLine, MalformedAndDoneLessLinesAreErrors) {
  EXPECT_THAT(decode_generate_line(R"({"response": "x)").error,
              ::testing::HasSubstr("malformed stream line"));
  EXPECT_THAT(decode_generate_line(R"({"response": "x"})").error,
              ::testing::HasSubstr("without \"done\""));
  EXPECT_EQ(decode_generate_line(R"({"error": {"message": "nested"}})").error, "nested");
}

TEST(GenerateBody, RawStreamedGreedyWithNumCtx) {
  CompletionSpec spec;
  spec.prompt = "AA run x call 1\nhello";
  spec.max_tokens = 16;
  spec.seed = 42;
  const json b = generate_body(spec, {"synthetic-small", 2048, "30m"});
  EXPECT_EQ(b, json::parse(R"({"model": "synthetic-small", "prompt": "AA run x call 1\nhello",
    "raw": true, "stream": true, "keep_alive": "30m",
    "options": {"num_ctx": 2048, "num_predict": 16, "temperature": 0.0, "seed": 42}})"));
  const json p = probe_body("Hello", 1, {"m", 1024, "5m"});
  EXPECT_EQ(p["stream"], false);
  EXPECT_EQ(p["options"]["num_ctx"], 1024);
  EXPECT_EQ(p["options"]["num_predict"], 1);
  EXPECT_FALSE(p["options"].contains("num_gpu")) << "Ollama's own choice unless set";
  const json g = generate_body(spec, {"m", 1024, "5m", 20});
  EXPECT_EQ(g["options"]["num_gpu"], 20) << "server.gpu_layers";
  EXPECT_FALSE(g["options"].contains("num_batch")) << "Ollama's own batch unless set";
  const json batched = generate_body(spec, {"m", 1024, "5m", -1, 64});
  EXPECT_EQ(batched["options"]["num_batch"], 64) << "server.batch_size";
}

TEST(OllamaBackend, GenerateRequestIsTheStreamedBodyWithTheTimeout) {
  test_support::ScriptedTransport t(/*strict: only the pure parts are used*/ true);
  const OllamaTarget target{"synthetic-small", 2048, "30m"};
  const OllamaBackend be(t, "http://127.0.0.1:9", target);
  CompletionSpec spec;
  spec.prompt = "hello";
  spec.timeout = std::chrono::milliseconds(1500);
  const auto req = be.generate_request(spec);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.url, "http://127.0.0.1:9/api/generate");
  EXPECT_EQ(req.timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(json::parse(req.body), generate_body(spec, target));
}

TEST(OllamaBackend, OnlyOkCallsWithACountRefineTheCalibration) {
  test_support::ScriptedTransport t(/*strict: only the pure parts are used*/ true);
  OllamaBackend be(t, "http://127.0.0.1:9", {"m", 2048, "30m"});
  CallResult ok;
  ok.server.prompt_n = 51;
  be.refine_calibration(200, ok);
  EXPECT_FALSE(be.calibration()) << "nothing to refine before the calibration";
  be.set_calibration(fit_calibration({{100, 26}, {400, 101}}));
  CallResult refused = ok;
  refused.outcome = kvbench::Outcome::http_error;
  be.refine_calibration(200, refused);
  CallResult uncounted;
  be.refine_calibration(200, uncounted);
  EXPECT_EQ(be.calibration()->points.size(), 2U);
  be.refine_calibration(200, ok);
  ASSERT_EQ(be.calibration()->points.size(), 3U);
  EXPECT_EQ(be.calibration()->points.back(), (std::pair<std::size_t, int>{200, 51}));
}

TEST(TokenCalibration, FitsTheLineAndEstimates) {
  const auto c = fit_calibration({{100, 26}, {400, 101}, {1600, 401}});
  EXPECT_NEAR(c.tokens_per_byte, 0.25, 1e-12);
  EXPECT_NEAR(c.intercept, 1.0, 1e-9);
  EXPECT_EQ(c.estimate(std::string(1000, 'x')), 251);
  EXPECT_EQ(c.estimate(""), 1);
  EXPECT_EQ(c.to_json()["probes"].size(), 3U);
  EXPECT_EQ(c.to_json()["probes"][1]["tokens"], 101);
  EXPECT_EQ(c.to_json()["counted_by"], "prompt_eval_count");
  EXPECT_THROW(fit_calibration({{100, 26}}), Error);
  EXPECT_THROW(fit_calibration({{100, 26}, {100, 27}}), Error);
  EXPECT_THROW(fit_calibration({{100, 26}, {400, 26}}), Error);
}

TEST(ShapeFromModelInfo, ReadsArchitecturePrefixedKeys) {
  const json info = json::parse(R"({"general.architecture": "llama",
    "llama.block_count": 32, "llama.context_length": 131072, "llama.embedding_length": 4096,
    "llama.attention.head_count": 32, "llama.attention.head_count_kv": 8,
    "llama.attention.layer_norm_rms_epsilon": 1e-5, "llama.rope.freq_base": 500000.0,
    "tokenizer.ggml.tokens": null, "tokenizer.ggml.merges": []})");
  const auto s = shape_from_model_info(info);
  EXPECT_EQ(s.n_layer, 32U);
  EXPECT_EQ(s.n_head_kv, 8U);
  EXPECT_EQ(s.head_dim_k, 128U);
  EXPECT_EQ(s.n_vocab, 0U) << "a non-verbose answer leaves the vocabulary out";
  // Llama 3 8B, f16: 32 layers x (K + V) x 8 heads x 128 x 2 bytes = 128 KiB per token.
  EXPECT_EQ(gguf::kv_bytes_per_token(s, gguf::GgmlType::f16, gguf::GgmlType::f16), 131072U);
  json per_layer = info;
  per_layer["llama.block_count"] = 2;
  per_layer["llama.attention.head_count_kv"] = {8, 4};
  EXPECT_EQ(shape_from_model_info(per_layer).n_head_kv_layers, (std::vector<std::uint32_t>{8, 4}));
  EXPECT_THROW(shape_from_model_info(json::object()), InputError);
}

TEST(FindPsEntry, MatchesNameWithImpliedLatestTag) {
  const json ps = json::parse(R"({"models": [
    {"name": "other:latest", "model": "other:latest", "size": 1},
    {"name": "synthetic-small:latest", "model": "synthetic-small:latest", "size": 7,
     "size_vram": 0, "context_length": 2048}]})");
  EXPECT_EQ((*find_ps_entry(ps, "synthetic-small"))["size"], 7);
  EXPECT_EQ((*find_ps_entry(ps, "synthetic-small:latest"))["context_length"], 2048);
  EXPECT_FALSE(find_ps_entry(ps, "synthetic-small:q8"));
  EXPECT_FALSE(find_ps_entry(json::object(), "x"));
}

TEST(OllamaServeLaunch, NumParallelGoesIntoTheEnvironment) {
  OllamaServeConfig c{"/usr/bin/ollama", "f16", false, "/tmp/x.log", 4};
  const auto l = ollama_serve_launch(c, 4321);
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(l.env_set, (Env{{"OLLAMA_HOST", "127.0.0.1:4321"},
                            {"OLLAMA_KV_CACHE_TYPE", "f16"},
                            {"OLLAMA_FLASH_ATTENTION", "0"},
                            {"OLLAMA_NUM_PARALLEL", "4"},
                            {"OLLAMA_MAX_LOADED_MODELS", "1"}}));
  EXPECT_EQ(l.argv.size(), 2U) << "an argument vector, no shell";
}

TEST(OllamaServeLaunch, SetsTheServerEnvironment) {
  const auto l = ollama_serve_launch({"/usr/bin/ollama", "q8_0", true, "/tmp/x.log"}, 4321);
  EXPECT_EQ(l.argv, (std::vector<std::string>{"/usr/bin/ollama", "serve"}));
  EXPECT_EQ(l.url, "http://127.0.0.1:4321");
  EXPECT_EQ(l.ready_path, "/api/version");
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(l.env_set, (Env{{"OLLAMA_HOST", "127.0.0.1:4321"},
                            {"OLLAMA_KV_CACHE_TYPE", "q8_0"},
                            {"OLLAMA_FLASH_ATTENTION", "1"},
                            {"OLLAMA_NUM_PARALLEL", "1"},
                            {"OLLAMA_MAX_LOADED_MODELS", "1"}}));
}

}  // namespace
}  // namespace kvbench::backend

namespace kvbench::backend {
namespace {

TEST(OllamaChat, AConversationTurnGoesToApiChatAndItsAnswerIsKept) {
  CompletionSpec spec;
  spec.messages = {{"system", "s"}, {"user", "hi"}};
  spec.max_tokens = 3;
  const OllamaTarget target{"m", 2048, "30m"};
  const auto body = chat_body(spec, target);
  EXPECT_EQ(body["messages"].size(), 2U);
  EXPECT_EQ(body["options"]["num_ctx"], 2048);
  EXPECT_EQ(body["options"]["num_predict"], 3);
  EXPECT_FALSE(body.contains("raw")) << "/api/chat applies the template";
  GenerateStreamDecoder d;
  const std::string lines =
      R"({"model":"m","message":{"role":"assistant","content":" the"},"done":false})"
      "\n"
      R"({"model":"m","message":{"role":"assistant","content":" dog"},"done":false})"
      "\n"
      R"({"model":"m","message":{"role":"assistant","content":""},"done":true,)"
      R"("prompt_eval_count":40,"prompt_eval_cached_count":30,"eval_count":2})"
      "\n";
  d.feed(lines, std::chrono::milliseconds(5));
  http::Result res;
  res.http_status = 200;
  const auto r = d.result(res);
  EXPECT_EQ(r.outcome, Outcome::ok) << r.error;
  EXPECT_EQ(r.text, " the dog");
  EXPECT_EQ(r.trace.token_counts.size(), 2U);
  EXPECT_EQ(r.server.cache_n, 30);
  EXPECT_EQ(r.server.prompt_total, 40);
}

}  // namespace
}  // namespace kvbench::backend
