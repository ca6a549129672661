// The store tests on SQLite files, and what only SQLite has: histories of older schema versions.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "harness/core/error.h"
#include "harness/workloads/conversation/record.h"
#include "harness/workloads/trace/record.h"
#include "tests/history/store_fixture.h"

namespace kvbench::history {

INSTANTIATE_TEST_SUITE_P(Sqlite, HistoryStore, ::testing::Values("sqlite"));

namespace {

class OlderHistory : public ::testing::Test {
 protected:
  std::string path_ = fresh_history("sqlite", "older");
  void TearDown() override { std::filesystem::remove(path_); }
  // A history of schema version 1 (before run labels), one session whose run folder is `run_dir`.
  void write_version_1(const std::string& run_dir) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    const auto sql = fmt::format(
        "CREATE TABLE sessions (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, recorded_at "
        "TEXT NOT NULL, label TEXT NOT NULL, scenario_name TEXT NOT NULL, scenario_hash TEXT NOT "
        "NULL, git_revision TEXT NOT NULL, machine TEXT NOT NULL, run_dir TEXT NOT NULL);"
        "CREATE TABLE session_values (session_id INTEGER NOT NULL REFERENCES sessions(id), metric "
        "TEXT NOT NULL, condition TEXT NOT NULL, variant TEXT NOT NULL, value REAL NOT NULL, "
        "ref_prompt_tokens INTEGER NOT NULL, ref_num_ctx INTEGER NOT NULL, n INTEGER NOT NULL);"
        "INSERT INTO sessions VALUES (1, '7dfd962ac6d2', '2026-01-01', 'l', 's', 'h1', 'g', 'm', "
        "'{}');"
        "INSERT INTO session_values VALUES (1, 'decode_tps', 'all calls', '', 5.0, 0, 0, 3);"
        "INSERT INTO session_values VALUES (1, 'ttft_ms', 'all calls', '', 7.0, 0, 0, 3);",
        run_dir);
    ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
  }
};

TEST_F(OlderHistory, ReadingRefusesItNamingTheMigrationAndWritesNothing) {
  write_version_1("/nowhere");
  try {
    History::open(path_, Access::read);
    FAIL() << "an older history was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format(
                  "schema version 1; this kvbench reads version {}: run kvbench history migrate",
                  kSchemaVersion)),
              std::string::npos)
        << e.what();
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  EXPECT_NE(sqlite3_exec(raw, "SELECT 1 FROM meta", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
}

TEST_F(OlderHistory, WritingMigratesItAndReadsTheHostFromTheRunFolder) {
  const std::string run_dir = std::string(KVBENCH_TEST_DATA) + "/runs/quickstart";
  write_version_1(run_dir);
  {
    const auto db = History::open(path_, Access::write);
    EXPECT_EQ(db->migrated_from(), 1);
    EXPECT_EQ(db->schema_version(), kSchemaVersion);
    EXPECT_EQ(db->fingerprints_recovered(), 1u);
    EXPECT_TRUE(db->start_taus("any", "server", "model").empty()) << "version 6's table is there";
  }
  const auto db = History::open(path_, Access::read);
  const auto rows = db->rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].value.metric, "decode_tps");  // the values keep their order
  EXPECT_EQ(rows[1].value.metric, "ttft_ms");
  EXPECT_EQ(rows[0].info.run_labels, "");
  EXPECT_EQ(rows[0].info.host_class, "Intel(R) Xeon(R) Processor, 2 cores, 24 GiB, no GPU, x86_64");
  EXPECT_EQ(rows[0].info.calls_digest, "");
  // Ingesting the same run now replaces the session of the older kvbench, calls and all.
  auto run = session::load_run_inputs(run_dir);
  const auto values =
      session::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
  const auto added = History::open(path_, Access::write)->add(session_of(run, "", values));
  EXPECT_TRUE(added.added);
  const auto after = History::open(path_, Access::read);
  EXPECT_EQ(after->sessions(), 1u);
  EXPECT_EQ(after->session(added.id).calls.size(), 17u);
}

// The columns of `table` in the SQLite file at `raw`.
std::vector<std::string> columns_of(sqlite3* raw, const std::string& table) {
  std::vector<std::string> out;
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw, ("PRAGMA table_info(" + table + ")").c_str(), -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  }
  sqlite3_finalize(st);
  return out;
}

// A history of `run` as an older version had it: `sql` run on the current schema's file.
std::string older_history(const std::string& name, const std::string& run_dir,
                          const std::string& sql) {
  const auto path = fresh_history("sqlite", name);
  auto run = session::load_run_inputs(run_dir);
  const auto values =
      session::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
  History::open(path, Access::write)->add(session_of(run, "", values));
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  sqlite3_free(err);
  sqlite3_close(raw);
  return path;
}

// A history of version 6 kept a conversation's columns in its calls table (and one of version 3
// lacked some of the record's own): migrated, the calls table has the record's columns, those it
// lacked filled from each call's whole record, and the conversation's columns are in its own
// table, one row per turn, read from the records too.
TEST(SqliteHistory, Version6MovesAWorkloadsColumnsToItsOwnTable) {
  const std::string run_dir = std::string(KVBENCH_TEST_DATA) + "/runs/conversation-tiny";
  const auto path = older_history(
      "version-6", run_dir,
      "ALTER TABLE calls ADD COLUMN turn INTEGER; ALTER TABLE calls ADD COLUMN reuse TEXT; "
      "ALTER TABLE calls DROP COLUMN http_status; DROP TABLE calls_conversation; "
      "UPDATE meta SET value = '6'");
  EXPECT_THROW(History::open(path, Access::read), InputError) << "version 6 must be migrated";
  {
    const auto db = History::open(path, Access::write);
    EXPECT_EQ(db->migrated_from(), 6);
    EXPECT_EQ(db->schema_version(), kSchemaVersion);
  }
  const auto run = session::load_run_inputs(run_dir);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const auto calls = columns_of(raw, "calls");
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "turn"), 0);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "reuse"), 0);
  ASSERT_EQ(std::count(calls.begin(), calls.end(), "http_status"), 1);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(raw, "SELECT seq, http_status FROM calls ORDER BY seq", -1, &st, nullptr),
      SQLITE_OK);
  std::size_t i = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const auto& c = run.loaded.calls[i++];
    EXPECT_EQ(sqlite3_column_int(st, 1), c.http_status.value_or(0)) << c.seq;
  }
  sqlite3_finalize(st);
  EXPECT_EQ(i, run.loaded.calls.size());
  ASSERT_EQ(sqlite3_prepare_v2(raw,
                               "SELECT seq, history_tokens, conversations, reuse FROM "
                               "calls_conversation ORDER BY seq",
                               -1, &st, nullptr),
            SQLITE_OK);
  int turns = 0;
  for (const auto& c : run.loaded.calls) {
    const auto* turn = workloads::turn_record(c);
    if (turn == nullptr) {
      continue;
    }
    ++turns;
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    ASSERT_EQ(sqlite3_column_int(st, 0), c.seq);
    EXPECT_EQ(sqlite3_column_int(st, 2), turn->conversations) << c.seq;
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 3)),
              std::string(turn->reuse ? "on" : "off"))
        << c.seq;
    if (turn->history_tokens) {
      EXPECT_EQ(sqlite3_column_int(st, 1), *turn->history_tokens) << c.seq;
    } else {
      EXPECT_EQ(sqlite3_column_type(st, 1), SQLITE_NULL) << c.seq;
    }
  }
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE) << "a row for each turn, none for another call";
  sqlite3_finalize(st);
  sqlite3_close(raw);
  EXPECT_GT(turns, 0);
  std::filesystem::remove(path);
}

// A history of version 4 had no trace replay's columns: migrated, the trace's table holds a row
// for each replayed request, filled from each call's whole record; the run's files need not be
// there.
TEST(SqliteHistory, Version4GainsTheTraceTableFilledFromTheRecords) {
  const std::string run_dir = std::string(KVBENCH_TEST_DATA) + "/runs/trace-tiny";
  const auto path =
      older_history("version-4", run_dir, "DROP TABLE calls_trace; UPDATE meta SET value = '4'");
  {
    const auto db = History::open(path, Access::write);
    EXPECT_EQ(db->migrated_from(), 4);
    EXPECT_EQ(db->schema_version(), kSchemaVersion);
  }
  const auto run = session::load_run_inputs(run_dir);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw,
                               "SELECT seq, trace_index, predicted_tokens FROM calls_trace "
                               "ORDER BY seq",
                               -1, &st, nullptr),
            SQLITE_OK);
  int replayed = 0;
  for (const auto& c : run.loaded.calls) {
    const auto* replay = workloads::replay_record(c);
    if (replay == nullptr) {
      continue;
    }
    ++replayed;
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    ASSERT_EQ(sqlite3_column_int(st, 0), c.seq);
    EXPECT_EQ(sqlite3_column_int(st, 1), replay->index) << c.seq;
    EXPECT_EQ(sqlite3_column_int(st, 2), *replay->predicted_tokens) << c.seq;
  }
  EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(raw);
  EXPECT_EQ(replayed, 30);
  std::filesystem::remove(path);
}

TEST(SqliteHistory, AMissingFileIsAnInputErrorForReadingAndNotCreated) {
  const auto path = fresh_history("sqlite", "missing");
  EXPECT_THROW(History::open(path, Access::read), InputError);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SqliteHistory, AFileThatIsNoHistoryIsAnInputError) {
  const auto path = fresh_history("sqlite", "not-a-db");
  { std::ofstream(path) << "not a database, just text that is long enough to be read as a header"; }
  EXPECT_THROW(History::open(path, Access::read), InputError);
  std::filesystem::remove(path);
}

TEST(PostgresqlUrl, APasswordInTheUrlIsRefusedAndNeverShown) {
  for (const std::string url : {"postgresql://kv:s3cret@127.0.0.1:5432/db",
                                "postgres://127.0.0.1/db?user=kv&password=s3cret"}) {
    try {
      History::open(url, Access::read);
      FAIL() << "a URL with a password was used";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("PGPASSWORD"), std::string::npos) << what;
      EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace kvbench::history
