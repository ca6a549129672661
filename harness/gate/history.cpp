#include "harness/gate/history.h"

#include <cmath>

#include <fmt/format.h>
#include <sqlite3.h>

#include "harness/core/error.h"
#include "harness/gate/decision.h"

namespace kvbench::gate {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS sessions (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  recorded_at TEXT NOT NULL,
  label TEXT NOT NULL,
  scenario_name TEXT NOT NULL,
  scenario_hash TEXT NOT NULL,
  git_revision TEXT NOT NULL,
  machine TEXT NOT NULL,
  run_dir TEXT NOT NULL,
  run_labels TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS session_values (
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  metric TEXT NOT NULL,
  condition TEXT NOT NULL,
  variant TEXT NOT NULL,
  value REAL NOT NULL,
  ref_prompt_tokens INTEGER NOT NULL,
  ref_num_ctx INTEGER NOT NULL,
  n INTEGER NOT NULL);
)sql";

// A prepared statement, finalized on destruction.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::filesystem::path& path)
      : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw Error(fmt::format("{}: {}", path.string(), sqlite3_errmsg(db)));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  // Steps once: true while a row is available; throws on an error.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
      return true;
    }
    if (rc == SQLITE_DONE) {
      return false;
    }
    throw Error(fmt::format("{}: {}", path_.string(), sqlite3_errmsg(db_)));
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p == nullptr ? std::string{} : std::string(reinterpret_cast<const char*>(p));
  }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::filesystem::path path_;
};

void exec(sqlite3* db, const char* sql, const std::filesystem::path& path) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message == nullptr ? "unknown error" : message;
    sqlite3_free(message);
    throw Error(fmt::format("{}: {}", path.string(), text));
  }
}

}  // namespace

HistoryDb::HistoryDb(const std::filesystem::path& path, bool create) : path_(path) {
  if (!create && !std::filesystem::exists(path)) {
    throw InputError(fmt::format("{}: no such history file (create it with kvbench history add)",
                                 path.string()));
  }
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db_ == nullptr ? "out of memory" : sqlite3_errmsg(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(fmt::format("{}: cannot open the history: {}", path.string(), msg));
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    exec(db_, kSchema, path_);
    // A history written before sessions kept their run's labels gains the column, empty.
    bool has_labels = false;
    Statement columns(db_, "PRAGMA table_info(sessions)", path_);
    while (columns.step()) {
      has_labels = has_labels || columns.text(1) == "run_labels";
    }
    if (!has_labels) {
      exec(db_, "ALTER TABLE sessions ADD COLUMN run_labels TEXT NOT NULL DEFAULT ''", path_);
    }
  } catch (const Error& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(fmt::format("{} (is it a kvbench history file?)", e.what()));
  }
}

HistoryDb::~HistoryDb() {
  sqlite3_close(db_);
}

std::int64_t HistoryDb::add(const SessionInfo& info, const std::vector<SessionValue>& values) {
  {
    Statement dup(db_, "SELECT COUNT(*) FROM sessions WHERE run_id = ?1", path_);
    dup.bind(1, info.run_id).step();
    if (dup.integer(0) > 0) {
      throw InputError(
          fmt::format("{}: run {} is already in the history", path_.string(), info.run_id));
    }
  }
  exec(db_, "BEGIN IMMEDIATE", path_);
  try {
    Statement s(db_,
                "INSERT INTO sessions (run_id, recorded_at, label, scenario_name, scenario_hash, "
                "git_revision, machine, run_dir, run_labels) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                "?8, ?9)",
                path_);
    s.bind(1, info.run_id).bind(2, info.recorded_at).bind(3, info.label);
    s.bind(4, info.scenario_name).bind(5, info.scenario_hash).bind(6, info.git_revision);
    s.bind(7, info.machine).bind(8, info.run_dir).bind(9, info.run_labels).step();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    for (const auto& v : values) {
      if (!std::isfinite(v.value)) {
        continue;
      }
      Statement row(db_,
                    "INSERT INTO session_values (session_id, metric, condition, variant, value, "
                    "ref_prompt_tokens, ref_num_ctx, n) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    path_);
      row.bind(1, id).bind(2, v.metric).bind(3, condition_label(v.where)).bind(4, v.variant);
      row.bind(5, v.value).bind(6, std::int64_t{v.ref_prompt_tokens});
      row.bind(7, std::int64_t{v.ref_num_ctx}).bind(8, static_cast<std::int64_t>(v.n)).step();
    }
    exec(db_, "COMMIT", path_);
    return id;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<HistoryRow> HistoryDb::rows() const {
  Statement s(db_,
              "SELECT s.id, s.run_id, s.recorded_at, s.label, s.scenario_name, s.scenario_hash, "
              "s.git_revision, s.machine, s.run_dir, v.metric, v.condition, v.variant, v.value, "
              "v.ref_prompt_tokens, v.ref_num_ctx, v.n, s.run_labels FROM sessions s JOIN "
              "session_values v ON "
              "v.session_id = s.id ORDER BY s.id, v.rowid",
              path_);
  std::vector<HistoryRow> out;
  while (s.step()) {
    HistoryRow r;
    r.session_id = s.integer(0);
    r.info = {s.text(1), s.text(2), s.text(3), s.text(4), s.text(5),
              s.text(6), s.text(7), s.text(8), s.text(16)};
    r.metric = s.text(9);
    r.condition = s.text(10);
    r.variant = s.text(11);
    r.value = s.real(12);
    r.ref_prompt_tokens = static_cast<int>(s.integer(13));
    r.ref_num_ctx = static_cast<int>(s.integer(14));
    r.n = s.integer(15);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<double> HistoryDb::recent(const std::string& scenario_hash, const std::string& metric,
                                      const std::string& condition, const std::string& variant,
                                      std::size_t limit, const std::string& exclude_run_id) const {
  Statement s(db_,
              "SELECT value FROM (SELECT s.id AS id, v.value AS value FROM sessions s JOIN "
              "session_values v ON v.session_id = s.id WHERE s.scenario_hash = ?1 AND v.metric = "
              "?2 AND v.condition = ?3 AND v.variant = ?4 AND s.run_id != ?5 ORDER BY s.id DESC "
              "LIMIT ?6) ORDER BY id",
              path_);
  s.bind(1, scenario_hash).bind(2, metric).bind(3, condition).bind(4, variant);
  s.bind(5, exclude_run_id).bind(6, static_cast<std::int64_t>(limit));
  std::vector<double> out;
  while (s.step()) {
    out.push_back(s.real(0));
  }
  return out;
}

std::size_t HistoryDb::sessions() const {
  Statement s(db_, "SELECT COUNT(*) FROM sessions", path_);
  s.step();
  return static_cast<std::size_t>(s.integer(0));
}

}  // namespace kvbench::gate
