#include "harness/gate/history.h"

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "harness/core/error.h"
#include "harness/gate/history_gate.h"

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

class HistoryDbTest : public ::testing::Test {
 protected:
  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("kvbench-history-" + std::to_string(::getpid()) + ".sqlite");
  void SetUp() override { std::filesystem::remove(path_); }
  void TearDown() override { std::filesystem::remove(path_); }
  static SessionInfo info(const std::string& run_id, const std::string& hash) {
    SessionInfo s;
    s.run_id = run_id;
    s.recorded_at = "2026-01-01T00:00:00Z";
    s.label = run_id;
    s.label.insert(0, "label-");
    s.scenario_name = "gate-demo";
    s.scenario_hash = hash;
    s.git_revision = "abc123";
    s.machine = "host / cpu";
    s.run_dir = "/runs";
    return s;
  }
};

TEST_F(HistoryDbTest, RoundTripThroughTheFile) {
  {
    HistoryDb db(path_, true);
    SessionValue v = decode(42.5);
    v.where = {{"cache_type", "q8_0"}};
    v.variant = "base";
    v.ref_prompt_tokens = 1024;
    v.ref_num_ctx = 4096;
    v.n = 30;
    SessionValue missing = decode(std::nan(""));
    EXPECT_EQ(db.add(info("r1", "h1"), {v, missing}), 1);
  }
  HistoryDb db(path_, false);
  const auto rows = db.rows();
  ASSERT_EQ(rows.size(), 1u);  // the NaN value is not stored
  EXPECT_EQ(rows[0].info.run_id, "r1");
  EXPECT_EQ(rows[0].info.label, "label-r1");
  EXPECT_EQ(rows[0].info.git_revision, "abc123");
  EXPECT_EQ(rows[0].condition, "cache_type=q8_0");
  EXPECT_EQ(rows[0].variant, "base");
  EXPECT_DOUBLE_EQ(rows[0].value, 42.5);
  EXPECT_EQ(rows[0].ref_prompt_tokens, 1024);
  EXPECT_EQ(rows[0].n, 30);
  EXPECT_EQ(db.sessions(), 1u);
}

TEST_F(HistoryDbTest, RecentKeepsTheLastSessionsOfOneScenario) {
  HistoryDb db(path_, true);
  const std::vector<std::string> ids{"r0", "r1", "r2", "r3", "r4"};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    db.add(info(ids[i], "h1"), {decode(10.0 + static_cast<double>(i))});
  }
  db.add(info("other", "h2"), {decode(99.0)});
  EXPECT_EQ(db.recent("h1", "decode_tps", "all calls", "", 3, ""),
            (std::vector<double>{12, 13, 14}));
  EXPECT_EQ(db.recent("h1", "decode_tps", "all calls", "", 64, "r4"),
            (std::vector<double>{10, 11, 12, 13}));
  EXPECT_TRUE(db.recent("h1", "ttft_ms", "all calls", "", 64, "").empty());
  EXPECT_THROW(db.add(info("r1", "h1"), {decode(1.0)}), InputError);
}

TEST_F(HistoryDbTest, SessionsKeepTheirRunsLabels) {
  {
    HistoryDb db(path_, true);
    SessionInfo with = info("r1", "h1");
    with.run_labels = "commit=abc123, host=ci-7";
    db.add(with, {decode(1.0)});
    db.add(info("r2", "h1"), {decode(2.0)});
  }
  const auto rows = HistoryDb(path_, false).rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].info.run_labels, "commit=abc123, host=ci-7");
  EXPECT_EQ(rows[1].info.run_labels, "");
}

// A history written before sessions kept their run's labels: opening it adds the column, and its
// sessions read back with no labels.
TEST_F(HistoryDbTest, AnOlderHistoryGainsTheLabelsColumn) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  const char* old_schema =
      "CREATE TABLE sessions (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, recorded_at "
      "TEXT NOT NULL, label TEXT NOT NULL, scenario_name TEXT NOT NULL, scenario_hash TEXT NOT "
      "NULL, git_revision TEXT NOT NULL, machine TEXT NOT NULL, run_dir TEXT NOT NULL);"
      "CREATE TABLE session_values (session_id INTEGER NOT NULL REFERENCES sessions(id), metric "
      "TEXT NOT NULL, condition TEXT NOT NULL, variant TEXT NOT NULL, value REAL NOT NULL, "
      "ref_prompt_tokens INTEGER NOT NULL, ref_num_ctx INTEGER NOT NULL, n INTEGER NOT NULL);"
      "INSERT INTO sessions VALUES (1, 'old', '2026-01-01', 'l', 's', 'h1', 'g', 'm', '/r');"
      "INSERT INTO session_values VALUES (1, 'decode_tps', 'all calls', '', 5.0, 0, 0, 3);";
  ASSERT_EQ(sqlite3_exec(raw, old_schema, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  HistoryDb db(path_, false);
  const auto rows = db.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].info.run_id, "old");
  EXPECT_EQ(rows[0].info.run_labels, "");
  SessionInfo next = info("new", "h1");
  next.run_labels = "host=a";
  db.add(next, {decode(6.0)});
  EXPECT_EQ(db.rows().back().info.run_labels, "host=a");
}

TEST_F(HistoryDbTest, MissingFileIsAnInputError) {
  EXPECT_THROW(HistoryDb(path_, false), InputError);
}

}  // namespace
}  // namespace kvbench::gate
