// A scaled family sample of Mooncake's conversation trace replayed against the real llama-server:
// the server's policy as modelled predicts the reuse it reports, request by request, with one slot
// and no host cache, and with two slots and the host prompt cache on; every gap has its class.

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/workloads/trace/record.h"
#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;

struct Replayed {
  int requests = 0;
  int predicted = 0;  // with a prediction and a reported reuse
  int equal = 0;
  nlohmann::json summary;
  fs::path run_dir;
};

Replayed replay(const std::string& name, int slots, const std::string& args,
                const std::vector<std::string>& more = {},
                const std::string& model = "synthetic:tiny",
                const std::string& kind = R"("kind": "llama-server")") {
  const fs::path dir = fresh_dir("trace-" + name);
  fs::copy_file(fs::path(KVBENCH_SOURCE_DIR) / "tests/data/traces/mooncake-conversation.jsonl.xz",
                dir / "conversation.jsonl.xz");
  const std::string scenario =
      write_file(dir, "s.json",
                 R"({"name": "trace", "server": {)" + kind + R"(, "model": ")" + model +
                     R"(", "args": )" + args +
                     R"(}, "factors": {"num_ctx": [4096]}, "seed": 3, "warmup": 1,
          "workload": {"trace": {"file": "conversation.jsonl.xz", "sample": {"families": 10,
          "seed": 2}, "scale": {"tokens": 0.0625, "time": 2000}, "slots": )" +
                     std::to_string(slots) + "}}}");
  std::vector<std::string> command = {"run", scenario, "--results", (dir / "runs").string(), "-q"};
  command.insert(command.end(), more.begin(), more.end());
  const auto r = run_kvbench(command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto run_dir = only_run_dir(dir / "runs");
  Replayed out;
  out.run_dir = run_dir;
  out.summary = read_json(run_dir / "summary.json");
  for (const auto& c : read_calls(run_dir)) {
    if (!workloads::replay_record(c)) {
      continue;
    }
    ++out.requests;
    EXPECT_EQ(c.outcome, Outcome::ok) << workloads::replay_record(c)->index << ": " << c.error;
    EXPECT_TRUE(workloads::replay_record(c)->sent_ms) << workloads::replay_record(c)->index;
    if (!c.server.cache_n || !workloads::replay_record(c)->predicted_tokens) {
      continue;
    }
    ++out.predicted;
    const int reused = *c.server.cache_n;
    const int predicted = *workloads::replay_record(c)->predicted_tokens;
    out.equal += reused == predicted ? 1 : 0;
    // Every gap carries its class, and only a gap does.
    EXPECT_EQ(workloads::replay_record(c)->mismatch.empty(), reused == predicted)
        << workloads::replay_record(c)->index;
    if (!workloads::replay_record(c)->loss.empty()) {
      EXPECT_LT(predicted - workloads::replay_record(c)->lead_tokens,
                workloads::replay_record(c)->infinite_tokens)
          << workloads::replay_record(c)->index;
      // One slot and no host cache: nowhere else to hold a prefix, so every loss is capacity.
      if (slots == 1 && args.find("--cache-ram") != std::string::npos) {
        EXPECT_EQ(workloads::replay_record(c)->loss, "capacity")
            << workloads::replay_record(c)->index;
      }
    }
  }
  return out;
}

void expect_trace_summary(const nlohmann::json& s, int requests, int slots) {
  const auto& trace = s.at("trace");
  // The working set grows request by request, against the slots' KV cells in 32-token blocks.
  const auto& ws = trace.at("working_set");
  EXPECT_DOUBLE_EQ(ws["capacity_blocks"].get<double>(), slots * 4096 / 32.0);
  long long before = 0;
  for (const auto& p : ws["points"]) {
    EXPECT_GE(p["blocks"].get<long long>(), before);
    before = p["blocks"];
  }
  EXPECT_GT(before, 0);
  EXPECT_EQ(trace.at("requests").size(), static_cast<std::size_t>(requests));
  for (const char* kind : {"infinite", "predicted", "actual"}) {
    for (const char* def : {"tokens", "blocks", "per_request_mean"}) {
      EXPECT_TRUE(trace["hit_rate"][kind][def].is_number()) << kind << "." << def;
    }
  }
  // The sample keeps reuse a window would not have: at least 20 % of its tokens.
  EXPECT_GE(trace["hit_rate"]["infinite"]["tokens"].get<double>(), 0.20);
  EXPECT_NEAR(trace["whole_trace_hit_rate"]["infinite"]["blocks"].get<double>(), 0.366, 0.0005);
}

TEST(TraceReplay, OneSlotWithoutAHostCachePredictsAlmostEveryRequest) {
  const Replayed r = replay("one-slot", 1, R"(["--cache-ram", "0"])");
  ASSERT_GT(r.requests, 20);
  EXPECT_EQ(r.predicted, r.requests);
  EXPECT_GE(r.equal, 0.95 * r.predicted) << r.equal << " of " << r.predicted;
  expect_trace_summary(r.summary, r.requests, 1);
}

TEST(TraceReplay, TwoSlotsWithTheHostCachePredictNineInTen) {
  const Replayed r = replay("two-slots", 2, "[]");
  ASSERT_GT(r.requests, 20);
  EXPECT_EQ(r.predicted, r.requests);
  EXPECT_GE(r.equal, 0.90 * r.predicted) << r.equal << " of " << r.predicted;
  expect_trace_summary(r.summary, r.requests, 2);
}

// --cache-ram 1: the host cache holds about 510 of the small model's tokens (2,060 bytes each), a
// few of the replay's prompts, so it drops its oldest saves; the policy drops the same.
TEST(TraceReplay, ASmallHostCacheDropsWhatThePolicyDrops) {
  const Replayed r = replay("small-host", 1, R"(["--cache-ram", "1"])", {}, "synthetic:small");
  ASSERT_GT(r.requests, 20);
  EXPECT_EQ(r.predicted, r.requests);
  EXPECT_GE(r.equal, 0.90 * r.predicted) << r.equal << " of " << r.predicted;
  int capacity = 0;
  for (const auto& q : r.summary["trace"]["requests"]) {
    capacity += q["loss"] == "capacity" ? 1 : 0;
  }
  EXPECT_GT(capacity, 0);
}

// Chat endpoints and the messages API take text: each block's words read as the planned tokens
// (checked before each request), the chat template's start is left out of the reuse, and the
// policy predicts what the server reports as it does for token ids.
TEST(TraceReplay, TextKindsReadAsPlannedAndArePredicted) {
  for (const std::string kind : {R"("kind": "openai")", R"("kind": "anthropic")"}) {
    const Replayed r = replay(kind.find("openai") != std::string::npos ? "chat" : "messages", 1,
                              R"(["--cache-ram", "0"])", {}, "synthetic:tiny", kind);
    ASSERT_GT(r.requests, 20) << kind;
    EXPECT_EQ(r.predicted, r.requests) << kind;
    EXPECT_GE(r.equal, 0.95 * r.predicted) << kind << ": " << r.equal << " of " << r.predicted;
    int lead = -1;
    for (const auto& c : read_calls(r.run_dir)) {
      if (workloads::replay_record(c)) {
        EXPECT_EQ(workloads::replay_record(c)->materialized, std::optional<bool>(true))
            << workloads::replay_record(c)->index;
        EXPECT_GT(workloads::replay_record(c)->lead_tokens, 0) << kind;
        EXPECT_TRUE(lead < 0 || lead == workloads::replay_record(c)->lead_tokens) << kind;
        lead = workloads::replay_record(c)->lead_tokens;
      }
    }
    expect_trace_summary(r.summary, r.requests, 1);
    EXPECT_EQ(r.summary["trace"]["text"]["read_as_planned"], r.requests) << kind;
    // A request that reused nothing of its blocks reports no reuse, its template's start aside.
    for (const auto& q : r.summary["trace"]["requests"]) {
      if (q["predicted_infinite_tokens"] == 0 && q["mismatch"].is_null()) {
        EXPECT_EQ(q["reused_tokens"], 0) << q.dump();
      }
    }
  }
}

// Past one host: two shards of the replay, merged, are the one-host replay's requests, each
// with its one-host infinite-cache reuse, less what crossed shards (named per request).
TEST(TraceReplay, TwoShardsMergedAreOneHostLessWhatCrossedShards) {
  const std::string no_cache = R"(["--cache-ram", "0"])";
  const Replayed one = replay("one-host", 1, no_cache);
  const Replayed first = replay("shard-0", 1, no_cache, {"--trace-shard", "0/2"});
  const Replayed second = replay("shard-1", 1, no_cache, {"--trace-shard", "1/2"});
  EXPECT_EQ(first.requests + second.requests, one.requests);
  EXPECT_EQ(first.equal, first.predicted);
  EXPECT_EQ(second.equal, second.predicted);
  const auto m = run_kvbench(
      {"trace", "merge", first.run_dir.string(), second.run_dir.string(), "--format", "json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto merged = nlohmann::json::parse(m.out);
  const auto& rows = merged["rows"];
  const auto& one_host = one.summary["trace"]["requests"];
  ASSERT_EQ(rows.size(), one_host.size());
  long long crossed = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    EXPECT_EQ(row["index"], one_host[i]["index"]);
    EXPECT_EQ(row["input_tokens"], one_host[i]["input_tokens"]);
    EXPECT_EQ(row["due_ms"], one_host[i]["due_ms"]);
    EXPECT_EQ(row["one_host_infinite_tokens"], one_host[i]["predicted_infinite_tokens"]);
    const long long x = row["crossed_tokens"];
    EXPECT_GE(x, 0);
    EXPECT_EQ(row["predicted_infinite_tokens"].get<long long>() + x,
              one_host[i]["predicted_infinite_tokens"].get<long long>());
    crossed += x;
  }
  EXPECT_EQ(merged["crossed"]["tokens"], crossed);
  EXPECT_EQ(merged["crossed"]["shared_blocks"].get<long long>() > 0, crossed > 0);
  // A shard given twice, or a run that is no shard of this replay, is refused.
  const auto twice =
      run_kvbench({"trace", "merge", first.run_dir.string(), first.run_dir.string()});
  EXPECT_EQ(twice.exit_code, 2);
}

// `trace synth` at working sets of 0.5, 1, 2 and 4 times a 32-block capacity, replayed against a
// block-LRU server (the hosted-API fixture as vLLM's prefix cache: 16-token blocks, 32 of them):
// the reported hit rate falls as the block-LRU model of the trace predicts, within 5 points.
TEST(TraceReplay, SyntheticTracesLoseTheirReuseAsTheLruModelPredicts) {
  const fs::path dir = fresh_dir("trace-synth");
  HostedFixture api({{"HOSTED_FIXTURE_TOKENIZE", "1"},
                     {"HOSTED_FIXTURE_CACHE_MIN", "0"},
                     {"HOSTED_FIXTURE_CACHE_STEP", "16"},
                     {"HOSTED_FIXTURE_CACHE_BLOCKS", "32"}},
                    dir / "fixture.log");
  double before = 2;
  for (const char* w : {"0.5", "1", "2", "4"}) {
    SCOPED_TRACE(std::string("working set ") + w);
    const fs::path sub = dir / w;
    fs::create_directories(sub);
    const std::string trace = (sub / "synth.jsonl").string();
    const auto made = run_kvbench({"trace",
                                   "synth",
                                   "--working-set",
                                   w,
                                   "--capacity-blocks",
                                   "32",
                                   "--block-tokens",
                                   "16",
                                   "--system-tokens",
                                   "64",
                                   "--question-tokens",
                                   "24",
                                   "--per-group",
                                   "3",
                                   "--turns",
                                   "2",
                                   "--gap-ms",
                                   "5",
                                   "--output-tokens",
                                   "2",
                                   "--seed",
                                   "4",
                                   "-o",
                                   trace});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const auto model = run_kvbench({"trace", "analyze", trace, "--block-tokens", "16",
                                    "--capacity-blocks", "32", "--format", "json"});
    ASSERT_EQ(model.exit_code, 0) << model.err;
    const double lru = nlohmann::json::parse(model.out)["hit_rate"]["lru"][0]["blocks"];
    const std::string scenario =
        write_file(sub, "s.json",
                   R"({"name": "synth", "server": {"kind": "openai", "url": ")" + api.url() +
                       R"(", "model": "fixture-model", "endpoint": "completions",
            "cache_rule": {"step": 16}}, "factors": {"num_ctx": [4096]}, "warmup": 0,
            "workload": {"trace": {"file": "synth.jsonl", "block_tokens": 16,
            "timing": "closed", "capacity_blocks": 32}}})");
    const auto r = run_kvbench({"run", scenario, "--results", (sub / "runs").string(), "-q"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto summary = read_json(only_run_dir(sub / "runs") / "summary.json")["trace"];
    const double actual = summary["hit_rate"]["actual"]["blocks"];
    EXPECT_NEAR(actual, lru, 0.05) << "reported " << actual << ", the LRU model " << lru;
    EXPECT_LT(actual, before);
    before = actual;
    EXPECT_EQ(summary["agreement"]["equal"], summary["agreement"]["predicted"]);
  }
}

}  // namespace
}  // namespace kvbench::itest
