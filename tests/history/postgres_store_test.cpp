// The store tests on PostgreSQL: a private server (Debian's postgresql, started as an unprivileged
// user on a free loopback port) for the whole executable, a fresh database per test.

#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "harness/history/store.h"
#include "tests/history/store_fixture.h"
#include "tests/support/postgres_server.h"

namespace kvbench::history {

namespace {

test::PostgresServer* g_server = nullptr;

class PostgresEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_server = new test::PostgresServer();
    postgres_database_maker() = [](const std::string& name) {
      g_server->create_database(name);
      return g_server->url(name);
    };
  }
  void TearDown() override {
    delete g_server;
    g_server = nullptr;
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new PostgresEnvironment);

}  // namespace

INSTANTIATE_TEST_SUITE_P(Postgresql, HistoryStore, ::testing::Values("postgresql"));

namespace {

// One schema: every table has the same columns, in the same order, in both stores.
TEST_P(HistoryStore, HasTheSchemaOfASqliteHistory) {
  const auto pg = open_write();
  const auto file = std::filesystem::temp_directory_path() / "kvbench-schema-compare.sqlite";
  std::filesystem::remove(file);
  const auto lite = History::open(file.string(), Access::write);
  for (const char* table : {"meta", "sessions", "session_values", "calls"}) {
    EXPECT_EQ(pg->sql().columns(table), lite->sql().columns(table)) << table;
    EXPECT_FALSE(pg->sql().columns(table).empty()) << table;
  }
  std::filesystem::remove(file);
}

TEST_P(HistoryStore, AnEmptyDatabaseReadsAsAnEmptyHistoryAndCreatesNothing) {
  const auto db = open_read();
  EXPECT_EQ(db->sessions(), 0u);
  EXPECT_TRUE(db->rows().empty());
  EXPECT_TRUE(db->sql().columns("sessions").empty());
}

TEST(PostgresqlServer, AnUnreachableServerIsAnInputErrorWithoutCredentials) {
  try {
    History::open("postgresql://kvbench@127.0.0.1:1/kvbench", Access::read);
    FAIL() << "connected to port 1";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect to the history"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("kvbench@"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::history
