// Reading a run folder back: a call an interrupt aborted gives its place to the repeat that
// --resume appended, so every planned call counts once; an aborted call not yet repeated stays.

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "harness/core/record.h"
#include "harness/results/results.h"

namespace kvbench::results {
namespace {

namespace fs = std::filesystem;

CallRecord recorded(int seq, Outcome outcome, const std::string& nonce) {
  CallRecord r;
  r.seq = seq;
  r.kind = CallKind::timed;
  r.outcome = outcome;
  r.nonce = nonce;
  if (outcome == Outcome::aborted) {
    r.error = "interrupted";
  }
  return r;
}

TEST(LoadRun, AnAbortedCallIsReplacedByItsRepeatInPlace) {
  const fs::path dir =
      fs::temp_directory_path() / ("kvbench-load-run-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(KVBENCH_TEST_DATA) / "runs" / "quickstart" / "run.json", dir / "run.json");
  {
    RecordWriter calls(dir / "calls.jsonl");
    for (const auto& r : {recorded(0, Outcome::ok, "a0"), recorded(1, Outcome::aborted, "a1"),
                          recorded(2, Outcome::aborted, "a2"), recorded(1, Outcome::ok, "b1"),
                          recorded(3, Outcome::ok, "b3")}) {
      calls.append(r);
    }
  }
  const LoadedRun run = load_run(dir);
  ASSERT_EQ(run.calls.size(), 4U);
  EXPECT_EQ(run.calls[0].nonce, "a0");
  EXPECT_EQ(run.calls[1].nonce, "b1") << "the repeat takes the aborted call's place";
  EXPECT_EQ(run.calls[1].outcome, Outcome::ok);
  EXPECT_EQ(run.calls[2].nonce, "a2") << "not yet repeated: kept, still aborted";
  EXPECT_EQ(run.calls[2].outcome, Outcome::aborted);
  EXPECT_EQ(run.calls[3].nonce, "b3");
  EXPECT_TRUE(run.warnings.empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kvbench::results
