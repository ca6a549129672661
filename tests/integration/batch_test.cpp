// The server's batch sizes as a factor on the real llama-server: each block's server starts with
// its batch (llama-server says so in its log, the micro-batch capped at the batch by its own
// rule), the blocks and calls record it, and the report's conditions are apart by it.

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;

// llama-server's "llama_context: n_batch = 64" (or n_ubatch) in the log at `path`; -1 if none.
int logged(const fs::path& path, const std::string& name) {
  return logged_number(path, "llama_context: " + name + R"(\s+= (\d+))");
}

TEST(BatchSize, EachBlocksServerStartsWithItsBatchAndTheConditionsAreApart) {
  const fs::path dir = fresh_dir("batch_size");
  const auto scenario = write_file(dir, "batch.json", R"({
      "name": "batch", "server": {"model": "synthetic:tiny"},
      "factors": {"prompt_tokens": [128, 256], "num_ctx": 1024, "batch_size": [64, 256]},
      "repeats": 2, "max_tokens": 8})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  std::set<int> batches;
  for (const auto& b : run["blocks"]) {
    ASSERT_TRUE(b.contains("batch_size")) << b.dump();
    const int batch = b["batch_size"];
    batches.insert(batch);
    const auto& argv = b["argv"];
    const auto flag = std::find(argv.begin(), argv.end(), "--batch-size");
    ASSERT_NE(flag, argv.end());
    EXPECT_EQ(*(flag + 1), std::to_string(batch));
    const fs::path log = run_dir / b["log"].get<std::string>();
    EXPECT_EQ(logged(log, "n_batch"), batch);
    EXPECT_EQ(logged(log, "n_ubatch"), batch) << "llama-server caps its micro-batch (512)";
  }
  EXPECT_EQ(batches, (std::set<int>{64, 256}));
  for (const auto& c : read_calls(run_dir)) {
    ASSERT_TRUE(c.batch_size) << c.seq;
    EXPECT_EQ(*c.batch_size,
              run["blocks"][static_cast<std::size_t>(c.block)]["batch_size"].get<int>())
        << c.seq;
  }
  const auto report = read_json(run_dir / "summary.json");
  std::set<std::pair<int, int>> conditions;  // batch, prompt tokens
  for (const auto& c : report["conditions"]) {
    conditions.insert({c.at("batch_size").get<int>(), c.at("prompt_tokens").get<int>()});
  }
  EXPECT_EQ(conditions.size(), 4U) << report["conditions"].dump();
}

}  // namespace
}  // namespace kvbench::itest
