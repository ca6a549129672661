// Why a finished run is short of its plan: blocks that never started, failed timed calls above
// the validity limit, nothing measured. Each reason is a sentence; a clean run has none.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/report/summary.h"

namespace kvbench::report {
namespace {

using ::testing::HasSubstr;

CallRecord timed(int seq, bool ok) {
  CallRecord r;
  r.seq = seq;
  r.kind = CallKind::timed;
  r.outcome = ok ? Outcome::ok : Outcome::http_error;
  return r;
}

RunReport report_of(std::vector<CallRecord> calls, std::vector<results::BlockInfo> blocks = {}) {
  RunReport r;
  r.calls = std::move(calls);
  r.run.blocks = std::move(blocks);
  return r;
}

TEST(Shortfalls, ACleanRunHasNone) {
  std::vector<CallRecord> calls;
  for (int i = 0; i < 20; ++i) {
    calls.push_back(timed(i, i != 3));  // one in twenty failed: within 10 %
  }
  EXPECT_TRUE(shortfalls(report_of(calls)).empty());
}

TEST(Shortfalls, BlocksNeverStartedAndTooManyFailuresAreSaid) {
  results::BlockInfo b;
  b.index = 2;
  b.num_ctx = 8192;
  b.cache_type = "q8_0";
  b.error = "llama-server exited with code 1";
  const auto why = shortfalls(report_of({timed(0, true), timed(1, false), timed(2, true)}, {b}));
  ASSERT_EQ(why.size(), 2U);
  EXPECT_EQ(why[0], "block 2 (num_ctx 8192, q8_0) never started: llama-server exited with code 1");
  EXPECT_THAT(why[1], HasSubstr("1 of 3 timed calls failed (33 %, more than the 10 %"));
  const auto none = shortfalls(report_of({timed(0, false), timed(1, false)}));
  ASSERT_EQ(none.size(), 1U);
  EXPECT_EQ(none[0], "all 2 timed calls failed: nothing was measured");
  CallRecord warm = timed(0, true);
  warm.kind = CallKind::warmup;
  EXPECT_THAT(shortfalls(report_of({warm})), ::testing::ElementsAre(HasSubstr("no timed call")));
}

TEST(Shortfalls, CallsCutOffByAnInterruptAreNotServerFailures) {
  std::vector<CallRecord> calls;
  for (int i = 0; i < 8; ++i) {
    calls.push_back(timed(i, true));
  }
  for (int i = 8; i < 10; ++i) {  // two streams cut off by Ctrl-C: 20 % of the calls
    CallRecord cut = timed(i, false);
    cut.outcome = Outcome::aborted;
    cut.error = "interrupted";
    calls.push_back(cut);
  }
  EXPECT_TRUE(shortfalls(report_of(calls)).empty());
  calls.push_back(timed(10, false));
  calls.push_back(timed(11, false));  // 2 real failures in 10 timed calls: 20 %
  EXPECT_THAT(shortfalls(report_of(calls)),
              ::testing::ElementsAre(HasSubstr("2 of 10 timed calls failed")));
}

}  // namespace
}  // namespace kvbench::report
