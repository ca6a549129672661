#pragma once
// The fixture of the store tests: a fresh, empty history per test, in the store the executable
// instantiates the suite for (a SQLite file, or a database on a private PostgreSQL server).

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "harness/history/store.h"

namespace kvbench::history {

// Makes a fresh database on the executable's PostgreSQL server and returns its URL; set by the
// executable that instantiates the suite for PostgreSQL.
inline std::function<std::string(const std::string&)>& postgres_database_maker() {
  static std::function<std::string(const std::string&)> make;
  return make;
}

// Where a fresh history is: a temporary file's path, or a new database's URL.
inline std::string fresh_history(const std::string& store, const std::string& test_name) {
  if (store == "postgresql") {
    return postgres_database_maker()(test_name);
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvbench-history-" + std::to_string(::getpid()) + "-" + test_name + ".sqlite");
  std::filesystem::remove(path);
  return path.string();
}

class HistoryStore : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (auto& c : name) {
      c = std::isalnum(static_cast<unsigned char>(c)) != 0 ? static_cast<char>(std::tolower(c))
                                                           : '_';
    }
    where_ = fresh_history(GetParam(), name);
  }
  void TearDown() override {
    if (!is_postgresql_url(where_)) {
      std::filesystem::remove(where_);
    }
  }
  std::unique_ptr<History> open_write() const { return History::open(where_, Access::write); }
  std::unique_ptr<History> open_read() const { return History::open(where_, Access::read); }
  std::string where_;
};

}  // namespace kvbench::history
