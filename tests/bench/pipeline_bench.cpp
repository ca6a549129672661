// Cost of kvbench's own work around each call: a whole stream decoded as the backends decode it
// (framing, the JSON of every event, the trace), the per-call record written (to_json, then
// appended and synced as a run does), and the expansion of a plan of 100,000 calls.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "harness/backend/completion_stream.h"
#include "harness/backend/ollama.h"
#include "harness/core/record.h"
#include "harness/plan/plan.h"
#include "harness/results/results.h"
#include "harness/scenario/scenario.h"

namespace {

constexpr int kTokens = 256;

std::string sse_stream() {
  std::string s;
  for (int i = 0; i < kTokens; ++i) {
    s += R"(data: {"index":0,"content":" word)" + std::to_string(i % 10) + R"(","tokens":[)" +
         std::to_string(1000 + i) + R"(],"stop":false,"id_slot":0,"tokens_predicted":)" +
         std::to_string(i + 1) + R"(,"tokens_evaluated":512})" + "\n\n";
  }
  s +=
      R"(data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"tokens_predicted":256,"tokens_evaluated":512,"stop_type":"limit","tokens_cached":767,"timings":{"cache_n":0,"prompt_n":512,"prompt_ms":181.2,"prompt_per_token_ms":0.35390625,"prompt_per_second":2825.6,"predicted_n":256,"predicted_ms":1980.5,"predicted_per_token_ms":7.7363,"predicted_per_second":129.26}})"
      "\n\n";
  return s;
}

std::string ndjson_stream() {
  std::string s;
  for (int i = 0; i < kTokens; ++i) {
    s += R"({"model":"kvbench-synthetic:q8_0","created_at":"2026-08-30T03:10:00.)" +
         std::to_string(100000 + i * 7731) + R"(Z","response":" word)" + std::to_string(i % 10) +
         R"(","done":false})" + "\n";
  }
  s +=
      R"({"model":"kvbench-synthetic:q8_0","created_at":"2026-08-30T03:10:02.100000Z","response":"","done":true,"done_reason":"length","total_duration":2171880411,"load_duration":10226043,"prompt_eval_count":512,"prompt_eval_duration":181200000,"eval_count":256,"eval_duration":1980500000})"
      "\n";
  return s;
}

// The stream cut as a server flushing each event hands it over.
std::vector<std::string_view> events_of(const std::string& text, std::string_view end) {
  std::vector<std::string_view> out;
  const std::string_view all(text);
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t next = all.find(end, at) + end.size();
    out.push_back(all.substr(at, next - at));
    at = next;
  }
  return out;
}

void BM_SseCompletionStreamDecode(benchmark::State& state) {
  const std::string text = sse_stream();
  const auto chunks = events_of(text, "\n\n");
  kvbench::http::Result res;
  res.outcome = kvbench::http::Outcome::ok;
  res.http_status = 200;
  std::size_t tokens = 0;
  for (auto _ : state) {
    kvbench::backend::CompletionStream stream;
    long tick = 0;
    for (const auto chunk : chunks) {
      stream.feed(chunk, kvbench::Nanos{++tick});
    }
    const auto r = stream.finish(res);
    tokens = r.trace.token_arrivals.size();
    benchmark::DoNotOptimize(tokens);
  }
  if (tokens != kTokens) {
    state.SkipWithError("wrong token count");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(chunks.size()));
}

void BM_NdjsonGenerateStreamDecode(benchmark::State& state) {
  const std::string text = ndjson_stream();
  const auto chunks = events_of(text, "\n");
  std::size_t tokens = 0;
  for (auto _ : state) {
    kvbench::backend::GenerateStreamDecoder decoder;
    long tick = 0;
    for (const auto chunk : chunks) {
      decoder.feed(chunk, kvbench::Nanos{++tick});
    }
    decoder.finish();
    tokens = decoder.trace().token_arrivals.size();
    benchmark::DoNotOptimize(tokens);
  }
  if (tokens != kTokens || text.empty()) {
    state.SkipWithError("wrong token count");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(chunks.size()));
}

// A timed call's record as a run writes it: 32 token events, the server's timings.
kvbench::CallRecord sample_record() {
  kvbench::CallRecord r;
  r.run_id = "7dfd962ac6d2";
  r.seq = 17;
  r.kind = kvbench::CallKind::timed;
  r.prompt_tokens = r.prompt_tokens_counted.emplace(1024);
  r.num_ctx = 4096;
  r.cache_type = "q8_0";
  r.nonce = "AA run 7dfd962ac6d2 call 17";
  r.t_start_s = 12.345678;
  r.wall_start = "2026-11-30T04:56:25.784Z";
  r.http_status = 200;
  for (int i = 0; i < 32; ++i) {
    r.client.token_ms.push_back(57.461044 + 0.5371 * i);
  }
  r.client.ttft_ms = r.client.first_byte_ms = 57.461044;
  r.client.e2e_ms = 83.004433;
  r.client.decode_tps = 1228.8312023550434;
  r.client.tokens = 32;
  r.server.prompt_n = 1023;
  r.server.cache_n = r.expected_cache_n = 1;
  r.server.prompt_ms = 152.838;
  r.server.predicted_n = 32;
  r.server.predicted_ms = 29.348;
  r.server.decode_tps = 1090.3639089546136;
  r.server.raw = {{"cache_n", 1},
                  {"prompt_n", 1023},
                  {"prompt_ms", 152.838},
                  {"predicted_n", 32},
                  {"predicted_ms", 29.348},
                  {"prompt_per_second", 6693.3},
                  {"predicted_per_second", 1090.36}};
  return r;
}

void BM_RecordToJson(benchmark::State& state) {
  const auto r = sample_record();
  std::size_t bytes = 0;
  for (auto _ : state) {
    bytes = kvbench::to_json(r).dump().size();
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations());
}

// to_json, then one line appended, flushed and fsynced: the writer thread's cost per call.
void BM_RecordAppend(benchmark::State& state) {
  const auto r = sample_record();
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvbench-record-bench-" + std::to_string(::getpid()) + ".jsonl");
  {
    kvbench::results::RecordWriter writer(path);
    for (auto _ : state) {
      writer.append(r);
    }
  }
  std::filesystem::remove(path);
  state.SetItemsProcessed(state.iterations());
}

// 20 blocks (4 num_ctx x 5 cache types) of 10 prompt lengths x 500 rounds: 100,000 timed calls
// (plus one warm-up call per block), shuffled.
void BM_PlanExpansion100k(benchmark::State& state) {
  const auto s = kvbench::scenario::parse_scenario(R"({
    "name": "plan-100k",
    "factors": {"prompt_tokens": [128, 256, 384, 512, 640, 768, 896, 1024, 1536, 2048],
                "num_ctx": [4096, 8192, 16384, 32768],
                "cache_type": ["f16", "q8_0", "q4_0", "q5_0", "bf16"]},
    "repeats": 500})",
                                                   "plan-100k");
  std::size_t calls = 0;
  for (auto _ : state) {
    const auto plan = kvbench::plan::make_plan(s);
    calls = 0;
    for (const auto& b : plan.blocks) {
      calls += b.calls.size();
    }
    benchmark::DoNotOptimize(calls);
  }
  if (calls != 100000 + 20) {
    state.SkipWithError("the plan does not have 100,020 calls");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(calls));
}

BENCHMARK(BM_SseCompletionStreamDecode);
BENCHMARK(BM_NdjsonGenerateStreamDecode);
BENCHMARK(BM_RecordToJson);
BENCHMARK(BM_RecordAppend);
BENCHMARK(BM_PlanExpansion100k)->Unit(benchmark::kMillisecond);

}  // namespace
