#include "harness/gate/history_gate.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kvbench::gate {
namespace {

using stats::Verdict;

const std::vector<double> kTen{100, 101, 99, 100, 102, 98, 100, 101, 99, 100};

SessionValue decode(double value) {
  SessionValue v;
  v.metric = "decode_tps";
  v.value = value;
  return v;
}

// mean 100, sd 1.155, t_9(0.99) = 2.821: the interval is 100 ± 3.417.
TEST(HistoryGate, PredictionIntervalAndMarginBothDecide) {
  auto e = history_entry(decode(90.0), kTen, 0.05);
  EXPECT_EQ(e.verdict, Verdict::fail);
  EXPECT_NEAR(e.limit, 96.583, 0.01);
  EXPECT_DOUBLE_EQ(e.reference, 100.0);
  EXPECT_EQ(history_entry(decode(97.0), kTen, 0.05).verdict, Verdict::pass);   // inside
  EXPECT_EQ(history_entry(decode(94.0), kTen, 0.10).verdict, Verdict::pass);   // within margin
  EXPECT_EQ(history_entry(decode(130.0), kTen, 0.05).verdict, Verdict::pass);  // faster
  SessionValue ttft = decode(110.0);
  ttft.metric = "ttft_ms";  // lower is better: 110 is 10 % worse
  EXPECT_EQ(history_entry(ttft, kTen, 0.05).verdict, Verdict::fail);
}

TEST(HistoryGate, FewerThanTenSessionsAreInconclusive) {
  const std::vector<double> nine(kTen.begin(), kTen.begin() + 9);
  const auto e = history_entry(decode(50.0), nine, 0.05);
  EXPECT_EQ(e.verdict, Verdict::inconclusive);
  EXPECT_EQ(e.reason, "9 earlier sessions in the history, 10 needed");
}

TEST(HistoryGate, TwoSessionsUseTheHistorySpreadNotTheirOwn) {
  const double sd_log = 0.011547;  // sd of log(kTen), about 1.15 %
  const double half = 2.821 * sd_log * std::sqrt(2.0);
  EXPECT_EQ(
      compare_sessions(decode(100), decode(100 * std::exp(-half + 0.002)), kTen, 0.01).verdict,
      Verdict::pass);
  EXPECT_EQ(compare_sessions(decode(100), decode(90), kTen, 0.05).verdict, Verdict::fail);
  EXPECT_EQ(compare_sessions(decode(100), decode(96), kTen, 0.05).verdict, Verdict::pass);
  EXPECT_EQ(compare_sessions(decode(100), decode(90), std::vector<double>{100, 99}, 0.05).verdict,
            Verdict::inconclusive);
}

}  // namespace
}  // namespace kvbench::gate
