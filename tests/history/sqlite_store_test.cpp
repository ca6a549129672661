// The store tests on SQLite files, and what only SQLite has: histories of older schema versions.

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "harness/core/error.h"
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

// A history of version 3 (its calls table without history_tokens, conversations and reuse) is
// migrated by adding the columns the call field list has and it lacks, filled from each call's
// whole record.
TEST(SqliteHistory, Version3GainsTheCallColumnsItLackedFilledFromTheRecords) {
  const auto path = fresh_history("sqlite", "version-3");
  const std::string run_dir = std::string(KVBENCH_TEST_DATA) + "/runs/conversation-tiny";
  auto run = session::load_run_inputs(run_dir);
  const auto values =
      session::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
  History::open(path, Access::write)->add(session_of(run, "", values));
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const auto exec = [&](const std::string& sql) {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
    sqlite3_free(err);
  };
  exec(
      "ALTER TABLE calls DROP COLUMN history_tokens; ALTER TABLE calls DROP COLUMN "
      "conversations; ALTER TABLE calls DROP COLUMN reuse; UPDATE meta SET value = '3'");
  sqlite3_close(raw);
  EXPECT_THROW(History::open(path, Access::read), InputError) << "version 3 must be migrated";
  {
    const auto db = History::open(path, Access::write);
    EXPECT_EQ(db->migrated_from(), 3);
    EXPECT_EQ(db->schema_version(), kSchemaVersion);
  }
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw,
                               "SELECT seq, history_tokens, conversations, reuse FROM calls "
                               "ORDER BY seq",
                               -1, &st, nullptr),
            SQLITE_OK);
  int turns = 0;
  std::size_t i = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ASSERT_LT(i, run.loaded.calls.size());
    const auto& c = run.loaded.calls[i++];
    ASSERT_EQ(sqlite3_column_int(st, 0), c.seq);
    if (!c.turn) {
      EXPECT_EQ(sqlite3_column_type(st, 2), SQLITE_NULL) << c.seq;
      continue;
    }
    ++turns;
    EXPECT_EQ(sqlite3_column_int(st, 2), c.turn->conversations) << c.seq;
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 3)),
              std::string(c.turn->reuse ? "on" : "off"))
        << c.seq;
    if (c.turn->history_tokens) {
      EXPECT_EQ(sqlite3_column_int(st, 1), *c.turn->history_tokens) << c.seq;
    } else {
      EXPECT_EQ(sqlite3_column_type(st, 1), SQLITE_NULL) << c.seq;
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(raw);
  EXPECT_EQ(i, run.loaded.calls.size());
  EXPECT_GT(turns, 0);
  std::filesystem::remove(path);
}

// A history of version 4 (its calls table without a trace replay's columns) is migrated by
// adding them, filled from each call's whole record; the trace run's file need not be there.
TEST(SqliteHistory, Version4GainsTheTraceColumnsFilledFromTheRecords) {
  const auto path = fresh_history("sqlite", "version-4");
  const std::string run_dir = std::string(KVBENCH_TEST_DATA) + "/runs/trace-tiny";
  auto run = session::load_run_inputs(run_dir);
  const auto values =
      session::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
  History::open(path, Access::write)->add(session_of(run, "", values));
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const auto exec = [&](const std::string& sql) {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
    sqlite3_free(err);
  };
  for (const char* c : {"trace_index", "trace_due_ms", "trace_sent_ms", "predicted_infinite_tokens",
                        "predicted_tokens", "loss", "mismatch"}) {
    exec(std::string("ALTER TABLE calls DROP COLUMN ") + c);
  }
  exec("UPDATE meta SET value = '4'");
  sqlite3_close(raw);
  EXPECT_THROW(History::open(path, Access::read), InputError) << "version 4 must be migrated";
  {
    const auto db = History::open(path, Access::write);
    EXPECT_EQ(db->migrated_from(), 4);
    EXPECT_EQ(db->schema_version(), kSchemaVersion);
  }
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(raw, "SELECT seq, trace_index, predicted_tokens FROM calls ORDER BY seq",
                         -1, &st, nullptr),
      SQLITE_OK);
  int replayed = 0;
  std::size_t i = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ASSERT_LT(i, run.loaded.calls.size());
    const auto& c = run.loaded.calls[i++];
    ASSERT_EQ(sqlite3_column_int(st, 0), c.seq);
    if (!c.replay) {
      EXPECT_EQ(sqlite3_column_type(st, 1), SQLITE_NULL) << c.seq;
      continue;
    }
    ++replayed;
    EXPECT_EQ(sqlite3_column_int(st, 1), c.replay->index) << c.seq;
    EXPECT_EQ(sqlite3_column_int(st, 2), *c.replay->predicted_tokens) << c.seq;
  }
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
