// Cost per streamed event of kvbench's HTTP framing: SSE (llama-server) and NDJSON (Ollama)
// framing alone; framing plus kvbench's decoder for each event (decode_completion_event,
// decode_generate_line), which is what a call does per token; and, for comparison, framing plus
// a full nlohmann::json document per event. The harness's own work per token must stay far below
// the inter-token latencies it reports (milliseconds).

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "harness/backend/llama_server.h"
#include "harness/backend/ollama.h"
#include "harness/http/ndjson.h"
#include "harness/http/sse.h"

namespace {

constexpr int kTokens = 256;
constexpr std::string_view kPieces[] = {" the", " lazy", " dog", " sleeps", " under",
                                        " an",  " old",  " oak", ",",       " dreaming"};

// A llama-server /completion stream: kTokens token events, then the final event with timings.
std::vector<std::string> llama_events() {
  std::vector<std::string> events;
  for (int i = 0; i < kTokens; ++i) {
    events.push_back(R"(data: {"index":0,"content":")" + std::string(kPieces[i % 10]) +
                     R"(","tokens":[)" + std::to_string(1000 + i * 37 % 30000) +
                     R"(],"stop":false,"id_slot":0,"tokens_predicted":)" + std::to_string(i + 1) +
                     R"(,"tokens_evaluated":512})" + "\n\n");
  }
  events.push_back(
      R"(data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"kvbench-synthetic-q8_0.gguf","tokens_predicted":256,"tokens_evaluated":512,"generation_settings":{"n_predict":256,"seed":42,"temperature":0.0,"top_k":40,"top_p":0.95,"min_p":0.05},"prompt":"","has_new_line":false,"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":767,"timings":{"cache_n":0,"prompt_n":512,"prompt_ms":181.2,"prompt_per_token_ms":0.35390625,"prompt_per_second":2825.6070640176597,"predicted_n":256,"predicted_ms":1980.5,"predicted_per_token_ms":7.736328125,"predicted_per_second":129.26028780610956}})"
      "\n\n");
  return events;
}

// An Ollama /api/generate stream: kTokens done:false lines, then the done:true line.
std::vector<std::string> ollama_lines() {
  std::vector<std::string> lines;
  for (int i = 0; i < kTokens; ++i) {
    lines.push_back(R"({"model":"kvbench-synthetic:q8_0","created_at":"2026-08-30T03:10:00.)" +
                    std::to_string(100000 + i * 7731) + R"(Z","response":")" +
                    std::string(kPieces[i % 10]) + R"(","done":false})" + "\n");
  }
  lines.push_back(
      R"({"model":"kvbench-synthetic:q8_0","created_at":"2026-08-30T03:10:02.100000Z","response":"","done":true,"done_reason":"length","total_duration":2171880411,"load_duration":10226043,"prompt_eval_count":512,"prompt_eval_duration":181200000,"eval_count":256,"eval_duration":1980500000})"
      "\n");
  return lines;
}

// The stream as the network might hand it over: one chunk per event (chunk_bytes 0) or cut every
// chunk_bytes bytes.
struct Stream {
  std::string text;
  std::vector<std::string_view> chunks;
  std::size_t events = 0;
};

Stream make_stream(const std::vector<std::string>& events, std::size_t chunk_bytes) {
  Stream s;
  s.events = events.size();
  for (const auto& e : events) {
    s.text += e;
  }
  const std::string_view all(s.text);
  if (chunk_bytes == 0) {
    std::size_t at = 0;
    for (const auto& e : events) {
      s.chunks.push_back(all.substr(at, e.size()));
      at += e.size();
    }
  } else {
    for (std::size_t at = 0; at < all.size(); at += chunk_bytes) {
      s.chunks.push_back(all.substr(at, chunk_bytes));
    }
  }
  return s;
}

// What is done with each framed event.
enum class Work { frame, dom, decode };

// A full document per event, one field read so that the parse cannot be optimised away.
std::size_t dom_parse(std::string_view payload, const char* field) {
  const auto doc = nlohmann::json::parse(payload);
  const auto it = doc.find(field);
  return it != doc.end() && it->is_string() ? it->get_ref<const std::string&>().size() : 0;
}

// kvbench's decoder; 1 for a line that carries a token (or the final one), else 0.
std::size_t decode(const kvbench::http::NdjsonLine& line) {
  const auto ev = kvbench::backend::decode_generate_line(line.text);
  using Type = kvbench::backend::GenerateEvent::Type;
  return (ev.type == Type::partial && ev.has_token) || ev.type == Type::final ? 1 : 0;
}

const std::string& payload(const kvbench::http::SseEvent& e) {
  return e.data;
}
const std::string& payload(const kvbench::http::NdjsonLine& line) {
  return line.text;
}

template <typename Framer, typename Item, Work kWork>
void run(benchmark::State& state, const Stream& stream, const char* field) {
  Framer framer;
  std::vector<Item> out;
  out.reserve(stream.events);
  std::size_t decoded = 0;  // events the decoder understood, over all iterations
  std::size_t chars = 0;
  for (auto _ : state) {
    out.clear();
    long tick = 0;
    for (const auto chunk : stream.chunks) {
      framer.feed(chunk, kvbench::Nanos{++tick}, out);
    }
    framer.finish(out);
    for (const auto& item : out) {
      if constexpr (kWork == Work::dom) {
        chars += dom_parse(payload(item), field);
      } else if constexpr (kWork == Work::decode) {
        decoded += decode(item);
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::DoNotOptimize(chars);
    benchmark::DoNotOptimize(decoded);
  }
  if (out.size() != stream.events) {
    state.SkipWithError("wrong event count");
  }
  if (kWork == Work::decode &&
      decoded != static_cast<std::size_t>(state.iterations()) * stream.events) {
    state.SkipWithError("the decoder did not read every event as a token or final event");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(stream.events));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(stream.text.size()));
}

void BM_SseFraming(benchmark::State& state) {
  const Stream s = make_stream(llama_events(), static_cast<std::size_t>(state.range(0)));
  run<kvbench::http::SseFramer, kvbench::http::SseEvent, Work::frame>(state, s, "content");
}

// As CompletionStream frames and decodes: each event handed to the decoder in place (views into
// the framer's buffers), nothing copied into an event object.
void BM_SseFramingAndDecode(benchmark::State& state) {
  const Stream s = make_stream(llama_events(), static_cast<std::size_t>(state.range(0)));
  kvbench::http::SseFramer framer;
  std::size_t decoded = 0;
  std::size_t events = 0;
  const kvbench::http::SseFramer::EventFn on_event = [&](const kvbench::http::SseEventView& e) {
    const auto ev = kvbench::backend::decode_completion_event(e.event, e.data);
    using Type = kvbench::backend::CompletionEvent::Type;
    decoded += (ev.type == Type::partial && ev.tokens > 0) || ev.type == Type::final ? 1 : 0;
    ++events;
  };
  for (auto _ : state) {
    long tick = 0;
    for (const auto chunk : s.chunks) {
      framer.feed(chunk, kvbench::Nanos{++tick}, on_event);
    }
    framer.finish(on_event);
    benchmark::DoNotOptimize(decoded);
  }
  const auto expected = static_cast<std::size_t>(state.iterations()) * s.events;
  if (events != expected || decoded != expected) {
    state.SkipWithError("the decoder did not read every event as a token or final event");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.events));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(s.text.size()));
}

void BM_SseFramingAndJson(benchmark::State& state) {
  const Stream s = make_stream(llama_events(), static_cast<std::size_t>(state.range(0)));
  run<kvbench::http::SseFramer, kvbench::http::SseEvent, Work::dom>(state, s, "content");
}

void BM_NdjsonFraming(benchmark::State& state) {
  const Stream s = make_stream(ollama_lines(), static_cast<std::size_t>(state.range(0)));
  run<kvbench::http::NdjsonFramer, kvbench::http::NdjsonLine, Work::frame>(state, s, "response");
}

void BM_NdjsonFramingAndDecode(benchmark::State& state) {
  const Stream s = make_stream(ollama_lines(), static_cast<std::size_t>(state.range(0)));
  run<kvbench::http::NdjsonFramer, kvbench::http::NdjsonLine, Work::decode>(state, s, "response");
}

void BM_NdjsonFramingAndJson(benchmark::State& state) {
  const Stream s = make_stream(ollama_lines(), static_cast<std::size_t>(state.range(0)));
  run<kvbench::http::NdjsonFramer, kvbench::http::NdjsonLine, Work::dom>(state, s, "response");
}

// Argument: bytes per chunk; 0 = one chunk per event, as a server flushing each token sends it.
BENCHMARK(BM_SseFraming)->Arg(0)->Arg(7)->Arg(16384);
BENCHMARK(BM_SseFramingAndDecode)->Arg(0)->Arg(7)->Arg(16384);
BENCHMARK(BM_SseFramingAndJson)->Arg(0)->Arg(7)->Arg(16384);
BENCHMARK(BM_NdjsonFraming)->Arg(0)->Arg(7)->Arg(16384);
BENCHMARK(BM_NdjsonFramingAndDecode)->Arg(0)->Arg(7)->Arg(16384);
BENCHMARK(BM_NdjsonFramingAndJson)->Arg(0)->Arg(7)->Arg(16384);

}  // namespace
