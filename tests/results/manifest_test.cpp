#include "harness/results/manifest.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/results/results.h"

namespace kvbench::results {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

const fs::path kRuns = fs::path(KVBENCH_TEST_DATA) / "runs";

// Every recorded run (manifest version 1: no manifest_version) reads into the typed manifest
// and writes back as it was, with only the version and the layout's name added.
TEST(Manifest, RecordedVersionOneRunsRoundTripWithOnlyTheVersionAndNameAdded) {
  for (const char* name : {"quickstart", "ctx-sweep-small", "prefix-reuse-tiny"}) {
    SCOPED_TRACE(name);
    const json original = read_json(kRuns / name / "run.json");
    ASSERT_FALSE(original.contains("manifest_version"));
    const RunManifest m = manifest_from_json(original, name);
    EXPECT_EQ(m.manifest_version, 1);
    json expected = original;
    expected["manifest_version"] = 1;
    expected["schema"] = "kvbench.run";
    EXPECT_EQ(json(m), expected);
  }
}

TEST(Manifest, TypedFieldsOfARecordedRun) {
  const auto loaded = load_run(kRuns / "ctx-sweep-small");
  const RunManifest& m = loaded.run;
  EXPECT_EQ(m.status, "complete");
  EXPECT_FALSE(m.run_id.empty());
  EXPECT_FALSE(m.finished.empty());
  EXPECT_TRUE(m.scenario_hash.starts_with("fnv1a64:"));
  ASSERT_EQ(m.blocks.size(), 4U);
  const BlockInfo& b = m.blocks.front();
  EXPECT_EQ(b.index, 0);
  EXPECT_EQ(b.num_ctx, 1024);
  EXPECT_EQ(b.cache_type, "q8_0");
  EXPECT_EQ(b.log, "server-block0.log");
  EXPECT_TRUE(b.url.starts_with("http://127.0.0.1:"));
  EXPECT_TRUE(b.pid.has_value());
  ASSERT_FALSE(b.argv.empty());
  EXPECT_TRUE(b.argv.front().ends_with("llama-server"));
  // What the server answered stays as it came; what kvbench measured is typed.
  EXPECT_TRUE(b.other.contains("props"));
  EXPECT_FALSE(b.other.contains("kv_bytes_logged"));
  EXPECT_FALSE(b.other.contains("index"));
  EXPECT_FALSE(b.other.contains("url"));
  EXPECT_GT(b.memory.kv_bytes_logged.value_or(0), 0U);
  ASSERT_TRUE(b.memory.after_load.has_value());
  EXPECT_GT(b.memory.after_load->rss_bytes, 0U);
  EXPECT_EQ(b.memory.longest_prompt_tokens.has_value(), b.memory.after_longest_prompt.has_value());
  ASSERT_TRUE(b.memory.server_log.has_value());
  EXPECT_FALSE(b.memory.server_log->kv.empty());
  ASSERT_TRUE(m.machine.has_value());
  EXPECT_GT(m.machine->logical_cores, 0);
  EXPECT_FALSE(m.machine->architecture.empty());
  const auto shape = m.shape();
  ASSERT_TRUE(shape.has_value());
  EXPECT_GT(shape->n_layer, 0U);
}

TEST(Manifest, ANewManifestWritesItsVersionAndOmitsWhatIsUnset) {
  RunManifest m;
  m.run_id = "r1";
  m.status = "running";
  BlockInfo b;
  b.index = 2;
  b.num_ctx = 512;
  b.cache_type = "f16";
  m.blocks.push_back(b);
  const json j = m;
  EXPECT_EQ(j["manifest_version"], kManifestVersion);
  EXPECT_FALSE(j.contains("finished"));
  EXPECT_FALSE(j.contains("summary"));
  EXPECT_FALSE(j.contains("variants"));
  EXPECT_FALSE(j.contains("first_call_epoch_s"));
  EXPECT_EQ(j["blocks"][0], json::parse(R"({"index": 2, "replica": 0, "num_ctx": 512,
                                            "cache_type": "f16"})"));
  EXPECT_EQ(manifest_from_json(j, "x").manifest_version, kManifestVersion);
}

TEST(Manifest, BlockFieldsRoundTrip) {
  BlockInfo b;
  b.index = 1;
  b.replica = 1;
  b.num_ctx = 2048;
  b.cache_type = "q8_0";
  b.variant = "B";
  b.slots = 4;
  b.error = "did not start";
  b.restarts.push_back({7, "signal 9", "2026-12-01T00:00:00Z", "http://127.0.0.1:1", "", false});
  b.restarts.push_back({9, "exit code 1", "", "", "port in use", true});
  b.url = "http://127.0.0.1:1";
  b.log = "server-block1.log";
  b.argv = {"llama-server", "-c", "2048"};
  b.pid = 4242;
  b.memory_notes = {"no KV lines"};
  b.other["props"] = {{"build_info", "b1"}};
  const json j = b;
  EXPECT_EQ(j["restarts"][1], json::parse(R"({"after_seq": 9, "exit": "exit code 1",
                                               "error": "port in use", "gave_up": true})"));
  EXPECT_EQ(j["props"]["build_info"], "b1");  // flat beside the common fields
  const auto back = j.get<BlockInfo>();
  EXPECT_EQ(json(back), j);
  EXPECT_EQ(back.slots, 4);
  EXPECT_EQ(back.restarts.size(), 2U);
  EXPECT_TRUE(back.restarts[1].gave_up);
  EXPECT_EQ(back.other, json({{"props", {{"build_info", "b1"}}}}));
}

// Every run recorded in the tests' data (each workload, concurrency, variants, precision, the
// lesson's runs) reads into the typed manifest and block facts and writes back byte for byte
// (a version 1 file gains its version and the layout's name).
TEST(Manifest, EveryRecordedRunWritesBackByteForByte) {
  int blocks = 0;
  int typed = 0;
  for (const auto& e : fs::recursive_directory_iterator(KVBENCH_TEST_DATA)) {
    if (e.path().filename() != "run.json") {
      continue;
    }
    SCOPED_TRACE(e.path().string());
    const json original = read_json(e.path());
    json expected = original;
    expected["manifest_version"] = original.value("manifest_version", 1);
    expected["schema"] = "kvbench.run";
    const RunManifest m = manifest_from_json(original, e.path().string());
    EXPECT_EQ(json(m).dump(), expected.dump());
    EXPECT_FALSE(m.other.contains("precision"));
    for (const auto& block : original.value("blocks", json::array())) {
      const auto b = block.get<BlockInfo>();
      EXPECT_EQ(json(b).dump(), block.dump());
      ++blocks;
      typed += b.memory.after_load && b.server_counters && b.prompt_cache ? 1 : 0;
      EXPECT_FALSE(b.other.contains("memory_after_load"));
      EXPECT_FALSE(b.other.contains("server_counters"));
      EXPECT_FALSE(b.other.contains("machine_state"));
      EXPECT_FALSE(b.other.contains("concurrency"));
    }
  }
  EXPECT_GE(blocks, 30);
  EXPECT_GE(typed, 10);
  const RunManifest precise = load_run(kRuns / "precision-tiny").run;
  ASSERT_TRUE(precise.precision.has_value());
  EXPECT_EQ(precise.precision->last.status, "budget spent");
  EXPECT_EQ(precise.precision->checks.size(), precise.extended.size() + 1);
  EXPECT_EQ(precise.extended.front().sets_before, 1);
  ASSERT_FALSE(precise.resumed.empty());
  EXPECT_EQ(precise.resumed.front().calls_recorded, 7U);
  ASSERT_TRUE(precise.summary.has_value());
  EXPECT_EQ(precise.summary->failed, 0);
}

// Ollama's memory (GET /api/ps after the load and at the end), a concurrent block's statistics
// and an attached server's unknown slots: typed, and written back as read.
TEST(Manifest, OllamaAndConcurrencyFactsAreTypedAndWriteBack) {
  const json block = json::parse(R"({
    "index": 0, "replica": 0, "num_ctx": 2048, "cache_type": "q8_0", "slots": 2,
    "memory": {"ps": {"name": "m", "size": 5000}, "size_bytes": 5000, "context_length": 1024,
               "process_after_load": {"process_count": 1, "pids": [7], "rss_bytes": 10,
                                      "peak_rss_bytes": 11, "virtual_bytes": 12,
                                      "swap_bytes": 0}},
    "memory_at_end": {"error": "the model is not in GET /api/ps"},
    "num_parallel": null, "num_parallel_note": "attached", "slot_ctx": 1024, "deferred": 3,
    "concurrency": {"calls": 4, "ok": 3, "refused": 1, "failed": 0, "span_s": 1.5,
                    "max_in_flight": 2, "prompt_tok_per_s": 100.0, "decode_tok_per_s": 20.0,
                    "ttft_ms": {"p50": 1.0, "p90": 2.0, "p99": 3.0, "n": 3}},
    "server_queue": {"calls": 3, "service_ms_p50": 4.0, "waited": 1, "max_in_flight": 2,
                     "served_at_once": 1, "load_duration_reported": 0,
                     "wait_ms": {"p50": 1.0, "p90": 2.0, "p99": 3.0, "n": 3}},
    "server_counters": {"at_start": {"error": "HTTP 501: no metrics"},
                        "at_end": {"samples": {"vllm:prefix_cache_hits_total": 12.0}}}
  })");
  const auto b = block.get<BlockInfo>();
  EXPECT_EQ(json(b).dump(), block.dump());
  ASSERT_TRUE(b.api_ps_after_load && b.api_ps_after_load->process);
  EXPECT_EQ(b.api_ps_after_load->size_bytes, 5000U);
  EXPECT_EQ(b.api_ps_after_load->process->rss_bytes, 10U);
  ASSERT_TRUE(b.api_ps_at_end.has_value());
  EXPECT_FALSE(b.memory.at_end.has_value()) << "Ollama's memory_at_end is not a process tree";
  EXPECT_TRUE(b.num_parallel_unknown);
  EXPECT_EQ(b.deferred, 3);
  ASSERT_TRUE(b.concurrency && b.concurrency->ttft_ms);
  EXPECT_EQ(b.concurrency->ttft_ms->n, 3U);
  EXPECT_FALSE(b.concurrency->itl_ms.has_value());
  ASSERT_TRUE(b.server_queue && b.server_queue->waits);
  EXPECT_EQ(b.server_queue->waits->waited, 1U);
  ASSERT_TRUE(b.server_counters.has_value());
  EXPECT_TRUE(b.server_counters->at_start.error.has_value());
  EXPECT_EQ(b.server_counters->at_end.samples.at("vllm:prefix_cache_hits_total"), 12.0);
  EXPECT_EQ(b.other, json({{"num_parallel_note", "attached"}}));
}

// A known key whose value has another type (a hand-edited file) is kept as read.
TEST(Manifest, AFactOfAnotherTypeIsKeptAsRead) {
  const json block = {{"index", 0},
                      {"replica", 0},
                      {"num_ctx", 512},
                      {"cache_type", "f16"},
                      {"concurrency", "n/a"},
                      {"kv_bytes_logged", "unknown"},
                      {"server_counters", {{"at_end", {{"samples", {{"m", "text"}}}}}}}};
  const auto b = block.get<BlockInfo>();
  EXPECT_FALSE(b.concurrency.has_value());
  EXPECT_FALSE(b.memory.kv_bytes_logged.has_value());
  EXPECT_FALSE(b.server_counters.has_value());
  EXPECT_EQ(b.other.size(), 3U);
  EXPECT_EQ(json(b), block);
  // One of a pair written together read, the other kept: both come back as they were.
  json gpu = block;
  gpu["gpu_memory_after_load_bytes"] = "n/a";
  gpu["gpu_memory_at_end_bytes"] = 1024;
  const auto g = gpu.get<BlockInfo>();
  EXPECT_EQ(g.memory.gpu_at_end_bytes, 1024U);
  EXPECT_EQ(json(g), gpu);
}

TEST(Manifest, FieldsOfANewerLayoutAreKeptAsRead) {
  const json j = {{"run_id", "r"}, {"capacity", {{"levels", 3}}}, {"extended", json::array()}};
  const RunManifest m = manifest_from_json(j, "run.json");
  EXPECT_EQ(m.other, json({{"capacity", {{"levels", 3}}}}));
  EXPECT_EQ(json(m)["capacity"]["levels"], 3);
}

// What a newer kvbench might add inside a fact, and a partial fact, are typed and still write
// back as read; top-level records of another shape are kept rather than refusing the file.
TEST(Manifest, WhatThisVersionDoesNotKnowInsideAFactWritesBackAsRead) {
  json block = {{"index", 0}, {"replica", 0}, {"num_ctx", 512}, {"cache_type", "f16"}};
  block["concurrency"] = {{"calls", 4},    {"ok", 4},       {"refused", 0},
                          {"failed", 0},   {"span_s", 1.5}, {"max_in_flight", 2},
                          {"goodput", 3.5}};
  block["memory_after_load"] = {{"rss_bytes", 5}};
  const auto b = block.get<BlockInfo>();
  ASSERT_TRUE(b.concurrency.has_value());
  EXPECT_EQ(b.concurrency->calls, 4);
  ASSERT_TRUE(b.memory.after_load.has_value());
  EXPECT_EQ(b.memory.after_load->rss_bytes, 5U);
  EXPECT_EQ(json(b).dump(), block.dump());

  const json run = {{"run_id", "r"},
                    {"summary", "broken"},
                    {"precision", {{"ci", "not a pair"}}},
                    {"machine", {{"logical_cores", "two"}}}};
  const RunManifest m = manifest_from_json(run, "run.json");
  EXPECT_FALSE(m.summary.has_value());
  EXPECT_FALSE(m.precision.has_value());
  EXPECT_FALSE(m.machine.has_value());
  const json back = m;
  EXPECT_EQ(back["summary"], "broken");
  EXPECT_EQ(back["precision"], run["precision"]);
  EXPECT_EQ(back["machine"], run["machine"]);
}

TEST(Manifest, ANewerVersionIsRefusedNamingTheFile) {
  const json j = {{"manifest_version", kManifestVersion + 1}};
  try {
    manifest_from_json(j, "/runs/x/run.json");
    FAIL() << "a newer version was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/runs/x/run.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("manifest_version"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), 2);
  }
}

TEST(Manifest, AFieldOfTheWrongTypeNamesTheField) {
  const json j = {{"run_id", "r"}, {"blocks", "not a list"}};
  try {
    manifest_from_json(j, "run.json");
    FAIL() << "a wrong type was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"blocks\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(manifest_from_json(json::array(), "run.json"), InputError);
}

TEST(Manifest, ModelShapeNeedsTheFieldsOfTheArithmetic) {
  EXPECT_FALSE(model_shape(json::object()));
  EXPECT_FALSE(model_shape({{"shape", {{"n_layer", 0}}}}));
  EXPECT_FALSE(model_shape(json()));
}

TEST(Manifest, LabelsRoundTripAndAreLeftOutWhenNone) {
  RunManifest m;
  m.run_id = "r";
  EXPECT_FALSE(json(m).contains("labels"));
  m.labels = {{"host", "ci-7"}, {"commit", "abc"}};
  const json j = m;
  EXPECT_EQ(j["labels"], json({{"commit", "abc"}, {"host", "ci-7"}}));
  EXPECT_EQ(manifest_from_json(j, "run.json").labels, m.labels);
  json wrong = j;
  wrong["labels"] = json::array({"x"});
  EXPECT_THROW(manifest_from_json(wrong, "run.json"), InputError);
}

TEST(Manifest, AnExtendedRunKeepsTheHashOfTheScenarioItWasStartedWith) {
  RunManifest m;
  m.scenario = {{"name", "p"}, {"block_repeats", 1}, {"seed", 9}};
  m.scenario_hash = scenario_hash(m.scenario);
  EXPECT_EQ(first_scenario_hash(m), m.scenario_hash);
  EXPECT_EQ(m.scenario_hash.rfind("fnv1a64:", 0), 0U);
  // Two extensions: block_repeats 1 -> 3 -> 5; the first says how many sets there were.
  m.scenario["block_repeats"] = 5;
  m.extended = {{"", 2, 1, 0, 0}, {"", 2, 3, 0, 0}};
  EXPECT_NE(scenario_hash(m.scenario), m.scenario_hash);
  EXPECT_EQ(first_scenario_hash(m), m.scenario_hash);
  m.scenario["seed"] = 10;  // any other change is a changed file
  EXPECT_NE(first_scenario_hash(m), m.scenario_hash);
}

}  // namespace
}  // namespace kvbench::results
