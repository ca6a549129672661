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
  // What only llama-server records stays in detail, not among the common fields.
  EXPECT_TRUE(b.has("props"));
  EXPECT_TRUE(b.has("kv_bytes_logged"));
  EXPECT_FALSE(b.detail.contains("index"));
  EXPECT_FALSE(b.detail.contains("url"));
  EXPECT_GT(b.get<std::uint64_t>("kv_bytes_logged", 0), 0U);
  EXPECT_EQ(b.get<std::string>("kv_bytes_logged", "wrong type"), "wrong type");
  EXPECT_TRUE(b.object("memory_after_load").contains("rss_bytes"));
  EXPECT_TRUE(b.object("no such field").empty());
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
  b.detail["props"] = {{"build_info", "b1"}};
  const json j = b;
  EXPECT_EQ(j["restarts"][1], json::parse(R"({"after_seq": 9, "exit": "exit code 1",
                                               "error": "port in use", "gave_up": true})"));
  EXPECT_EQ(j["props"]["build_info"], "b1");  // flat beside the common fields
  const auto back = j.get<BlockInfo>();
  EXPECT_EQ(json(back), j);
  EXPECT_EQ(back.slots, 4);
  EXPECT_EQ(back.restarts.size(), 2U);
  EXPECT_TRUE(back.restarts[1].gave_up);
  EXPECT_EQ(back.detail, json({{"props", {{"build_info", "b1"}}}}));
}

TEST(Manifest, FieldsOfANewerLayoutAreKeptAsRead) {
  const json j = {{"run_id", "r"}, {"capacity", {{"levels", 3}}}, {"extended", json::array()}};
  const RunManifest m = manifest_from_json(j, "run.json");
  EXPECT_EQ(m.other, json({{"capacity", {{"levels", 3}}}}));
  EXPECT_EQ(json(m)["capacity"]["levels"], 3);
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
  m.extended = json::array({{{"sets", 2}, {"sets_before", 1}}, {{"sets", 2}, {"sets_before", 3}}});
  EXPECT_NE(scenario_hash(m.scenario), m.scenario_hash);
  EXPECT_EQ(first_scenario_hash(m), m.scenario_hash);
  m.scenario["seed"] = 10;  // any other change is a changed file
  EXPECT_NE(first_scenario_hash(m), m.scenario_hash);
}

}  // namespace
}  // namespace kvbench::results
