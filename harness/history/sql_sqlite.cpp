// The SQLite store of a history: one file, opened read-only for commands that only read.

#include <fmt/format.h>
#include <sqlite3.h>

#include "harness/core/error.h"
#include "harness/history/sql.h"

namespace kvbench::history {

namespace {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const std::string& sql, const std::string& where)
      : db_(db), where_(where) {
    const std::string text = sqlite_placeholders(sql);
    if (sqlite3_prepare_v2(db, text.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      throw Error(fmt::format("{}: {}", where, sqlite3_errmsg(db)));
    }
  }
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind(const std::vector<SqlValue>& params) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i) + 1;
      const auto& p = params[i];
      if (const auto* s = std::get_if<std::string>(&p)) {
        sqlite3_bind_text(stmt_, at, s->c_str(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      } else if (const auto* n = std::get_if<std::int64_t>(&p)) {
        sqlite3_bind_int64(stmt_, at, *n);
      } else if (const auto* d = std::get_if<double>(&p)) {
        sqlite3_bind_double(stmt_, at, *d);
      } else {
        sqlite3_bind_null(stmt_, at);
      }
    }
  }
  // Steps once: true while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
      return true;
    }
    if (rc == SQLITE_DONE) {
      return false;
    }
    throw Error(fmt::format("{}: {}", where_, sqlite3_errmsg(db_)));
  }
  SqlRow row() const {
    SqlRow out;
    const int n = sqlite3_column_count(stmt_);
    for (int c = 0; c < n; ++c) {
      switch (sqlite3_column_type(stmt_, c)) {
        case SQLITE_INTEGER:
          out.emplace_back(static_cast<std::int64_t>(sqlite3_column_int64(stmt_, c)));
          break;
        case SQLITE_FLOAT:
          out.emplace_back(sqlite3_column_double(stmt_, c));
          break;
        case SQLITE_NULL:
          out.emplace_back(std::monostate{});
          break;
        default: {
          const auto* p = sqlite3_column_text(stmt_, c);
          out.emplace_back(std::string(reinterpret_cast<const char*>(p),
                                       static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))));
        }
      }
    }
    return out;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string where_;
};

class SqliteConnection : public SqlConnection {
 public:
  SqliteConnection(const std::filesystem::path& path, bool read_only, bool create)
      : where_(path.string()), read_only_(read_only) {
    if (!std::filesystem::exists(path) && (read_only || !create)) {
      throw InputError(fmt::format(
          "{}: no such history file (create it with kvbench history add or kvbench ingest)",
          where_));
    }
    const int flags = read_only ? SQLITE_OPEN_READONLY
                                : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string msg = db_ == nullptr ? "out of memory" : sqlite3_errmsg(db_);
      sqlite3_close(db_);
      db_ = nullptr;
      throw InputError(fmt::format("{}: cannot open the history: {}", where_, msg));
    }
    sqlite3_busy_timeout(db_, 10000);
    if (!read_only) {
      execute("PRAGMA foreign_keys = ON");
    }
  }
  ~SqliteConnection() override { sqlite3_close(db_); }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  Dialect dialect() const override { return Dialect::sqlite; }
  std::string where() const override { return where_; }
  bool read_only() const override { return read_only_; }

  void execute(const std::string& sql) override {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      const std::string text = message == nullptr ? "unknown error" : message;
      sqlite3_free(message);
      throw Error(fmt::format("{}: {}", where_, text));
    }
  }
  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params) override {
    SqliteStatement s(db_, sql, where_);
    s.bind(params);
    std::vector<SqlRow> rows;
    while (s.step()) {
      rows.push_back(s.row());
    }
    return rows;
  }
  void execute_many(const std::string& sql,
                    const std::vector<std::vector<SqlValue>>& rows) override {
    SqliteStatement s(db_, sql, where_);
    for (const auto& params : rows) {
      s.bind(params);
      while (s.step()) {
      }
    }
  }
  void begin() override { execute("BEGIN IMMEDIATE"); }
  void commit() override { execute("COMMIT"); }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
  std::vector<std::string> columns(const std::string& table) override {
    std::vector<std::string> out;
    for (const auto& row : query("SELECT name FROM pragma_table_info($1) ORDER BY cid", {table})) {
      out.push_back(as_text(row[0]));
    }
    return out;
  }

 private:
  std::string where_;
  bool read_only_;
  sqlite3* db_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlConnection> open_sqlite(const std::filesystem::path& path, bool read_only,
                                           bool create) {
  return std::make_unique<SqliteConnection>(path, read_only, create);
}

}  // namespace kvbench::history
