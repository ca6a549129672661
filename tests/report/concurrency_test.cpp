#include "harness/report/concurrency.h"

#include <sstream>

#include <gtest/gtest.h>

namespace kvbench::report {
namespace {

using nlohmann::json;

// The printers read run.json as kvbench reads it: typed.
void write_concurrency_markdown(std::ostream& out, const json& run) {
  report::write_concurrency_markdown(out, results::manifest_from_json(run, "run.json"));
}

std::string queue_sentence(const json& block) {
  return report::queue_sentence(block.get<results::BlockInfo>());
}

json block(int index, int slots, json stats) {
  return {{"index", index},
          {"num_ctx", 256},
          {"cache_type", "f16"},
          {"slots", slots},
          {"concurrency", stats}};
}

json stats(int ok, int refused, double decode) {
  return {{"calls", ok + refused},
          {"ok", ok},
          {"refused", refused},
          {"failed", 0},
          {"max_in_flight", 4},
          {"prompt_tok_per_s", 812.25},
          {"decode_tok_per_s", decode},
          {"ttft_ms", {{"p50", 101.0}, {"p90", 150.5}, {"p99", 170.04}, {"n", ok}}},
          {"itl_ms", {{"p50", 5.0}, {"p90", 6.25}, {"p99", 9.0}, {"n", 40}}}};
}

TEST(ConcurrencyReport, OneRowPerConcurrentBlockWithItsPercentiles) {
  json run = {{"blocks", json::array()}};
  run["blocks"].push_back({{"index", 0}, {"num_ctx", 256}, {"cache_type", "f16"}});
  run["blocks"].push_back(block(1, 4, stats(8, 0, 95.5)));
  json open = block(2, 8, stats(6, 2, 40.0));
  open["deferred"] = 3;
  open["concurrency"].erase("itl_ms");
  run["blocks"].push_back(open);
  std::ostringstream out;
  write_concurrency_markdown(out, run);
  const std::string md = out.str();
  EXPECT_NE(md.find("## Concurrency"), std::string::npos);
  EXPECT_NE(md.find("| 1 | 256 | f16 | 4 | 8 | 0 | 0 | - | 4 | 812.2 | 95.5 | 101.0 / 150.5 / "
                    "170.0 | 5.0 / 6.2 / 9.0 |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2 | 256 | f16 | 8 | 6 | 2 | 0 | 3 | 4 | 812.2 | 40.0 | 101.0 / 150.5 / "
                    "170.0 | - |\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("| 0 | 256"), std::string::npos) << "a sequential block has no row";
}

TEST(ConcurrencyReport, VariantColumnOnlyWhenTheRunHasVariants) {
  json run = {{"blocks", json::array({block(0, 2, stats(4, 0, 10.0))})}};
  run["blocks"][0]["variant"] = "candidate";
  std::ostringstream out;
  write_concurrency_markdown(out, run);
  EXPECT_NE(out.str().find("| 0 | candidate | 256 | f16 | 2 | 4 |"), std::string::npos)
      << out.str();
}

json queue(int waited, int served, int in_flight, int load_reported) {
  json q = {{"calls", 8},
            {"service_ms_p50", 45.0},
            {"waited", waited},
            {"max_in_flight", in_flight},
            {"served_at_once", served},
            {"load_duration_reported", load_reported},
            {"wait_ms", {{"p50", 40.0}, {"p90", 46.0}, {"p99", 47.0}, {"n", 8}}}};
  if (waited > 0) {
    q["waited_ms"] = {{"p50", 44.25}, {"p90", 46.5}, {"p99", 47.0}, {"n", waited}};
  }
  if (load_reported > 0) {
    q["load_duration_ms"] = {{"p50", 43.0}, {"p90", 45.0}, {"p99", 46.0}, {"n", load_reported}};
  }
  return q;
}

TEST(ConcurrencyReport, AttachedOllamaThatQueuedSaysWhereAndWhatItsParallelLooksLike) {
  json b = block(0, 4, stats(8, 0, 95.5));
  b["num_parallel"] = nullptr;
  b["server_queue"] = queue(6, 2, 4, 6);
  EXPECT_EQ(queue_sentence(b),
            "block 0: 6 of 8 calls waited inside the server before it read them (wait p50 44.2 "
            "ms, p90 46.5 ms, in their TTFT); it served at most 2 at once while up to 4 were in "
            "flight; kvbench attached and could not set OLLAMA_NUM_PARALLEL: the server's looks "
            "like 2. The server reported load_duration on 6 calls (p50 43.0 ms): Ollama counts "
            "waiting in its queue as loading.");
  json run = {{"blocks", json::array({b})}};
  std::ostringstream out;
  write_concurrency_markdown(out, run);
  EXPECT_NE(out.str().find("\n- block 0: 6 of 8 calls waited"), std::string::npos) << out.str();
}

TEST(ConcurrencyReport, ManagedOllamaWithoutWaitsNamesTheParallelItSet) {
  json b = block(1, 4, stats(8, 0, 95.5));
  b["num_parallel"] = 4;
  b["server_queue"] = queue(0, 4, 4, 0);
  EXPECT_EQ(queue_sentence(b),
            "block 1: no call waited inside the server; it served up to 4 at once; "
            "OLLAMA_NUM_PARALLEL was 4 (set by kvbench).");
  b.erase("num_parallel");
  b["server_queue"] = {{"calls", 8}};
  EXPECT_EQ(queue_sentence(b),
            "block 1: the server reported no durations, so where calls waited is not known.");
  EXPECT_EQ(queue_sentence(block(2, 4, stats(8, 0, 1.0))), "") << "llama-server: no queue";
}

TEST(ConcurrencyReport, AttachedOllamaThatNeverQueuedGivesALowerBound) {
  json b = block(0, 4, stats(8, 0, 95.5));
  b["num_parallel"] = nullptr;
  b["server_queue"] = queue(0, 4, 4, 0);
  EXPECT_EQ(queue_sentence(b),
            "block 0: no call waited inside the server; it served up to 4 at once; kvbench "
            "attached and could not set OLLAMA_NUM_PARALLEL: the server's is at least 4.");
}

TEST(ConcurrencyReport, NothingWithoutConcurrentBlocks) {
  std::ostringstream out;
  write_concurrency_markdown(out, json{{"blocks", json::array({{{"index", 0}}})}});
  write_concurrency_markdown(out, json::object());
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace kvbench::report
