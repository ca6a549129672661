#include "harness/history/schema.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "harness/core/call_fields.h"
#include "harness/core/error.h"
#include "harness/history/store.h"

namespace kvbench::history {

namespace {

// The schema of the current version, for both stores: {id} is the key column's type, {real} and
// {int} the number types (PostgreSQL's INTEGER is 32 bits, SQLite's is 64); {calls} is the calls
// table, its columns those of the call field list (core/call_fields.h).
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
  id {id},
  run_id TEXT NOT NULL UNIQUE,
  recorded_at TEXT NOT NULL,
  label TEXT NOT NULL,
  scenario_name TEXT NOT NULL,
  scenario_hash TEXT NOT NULL,
  git_revision TEXT NOT NULL,
  machine TEXT NOT NULL,
  run_dir TEXT NOT NULL,
  run_labels TEXT NOT NULL DEFAULT '',
  host_class TEXT NOT NULL DEFAULT '',
  hostname TEXT NOT NULL DEFAULT '',
  cpu_model TEXT NOT NULL DEFAULT '',
  logical_cores {int} NOT NULL DEFAULT 0,
  memory_bytes {int} NOT NULL DEFAULT 0,
  gpus TEXT NOT NULL DEFAULT '',
  os_name TEXT NOT NULL DEFAULT '',
  architecture TEXT NOT NULL DEFAULT '',
  server_kind TEXT NOT NULL DEFAULT '',
  server_version TEXT NOT NULL DEFAULT '',
  server_binary TEXT NOT NULL DEFAULT '',
  kvbench_version TEXT NOT NULL DEFAULT '',
  fingerprint TEXT NOT NULL DEFAULT '{}',
  calls_digest TEXT NOT NULL DEFAULT '',
  calls {int} NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS session_values (
  session_id {int} NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  idx {int} NOT NULL DEFAULT 0,
  metric TEXT NOT NULL,
  condition TEXT NOT NULL,
  variant TEXT NOT NULL,
  value {real} NOT NULL,
  ref_prompt_tokens {int} NOT NULL,
  ref_num_ctx {int} NOT NULL,
  n {int} NOT NULL);
{calls}
CREATE TABLE IF NOT EXISTS start_taus (
  id {id},
  measured TEXT NOT NULL,
  host_class TEXT NOT NULL,
  server TEXT NOT NULL,
  model TEXT NOT NULL,
  metric TEXT NOT NULL,
  term TEXT NOT NULL,
  relative {int} NOT NULL,
  tau {real} NOT NULL,
  df {real} NOT NULL,
  runs {int} NOT NULL,
  starts {real} NOT NULL,
  scenario_name TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS start_taus_by_key ON start_taus (host_class, server, model);
CREATE INDEX IF NOT EXISTS sessions_by_scenario ON sessions (scenario_hash, host_class);
CREATE INDEX IF NOT EXISTS values_by_session ON session_values (session_id);
CREATE INDEX IF NOT EXISTS calls_by_session ON calls (session_id);
)sql";

// A field's column type, its number types left as {int} and {real}.
// The number types of a dialect (PostgreSQL's INTEGER is 32 bits, SQLite's is 64).
const char* int_type(Dialect d) {
  return d == Dialect::postgresql ? "BIGINT" : "INTEGER";
}
const char* real_type(Dialect d) {
  return d == Dialect::postgresql ? "DOUBLE PRECISION" : "REAL";
}

// A call field's column type in dialect `d`.
const char* column_type(CallField::Type type, Dialect d) {
  switch (type) {
    case CallField::Type::integer:
      return int_type(d);
    case CallField::Type::real:
      return real_type(d);
    case CallField::Type::text:
      break;
  }
  return "TEXT";
}

}  // namespace

std::string gpus_text(const session::HostFingerprint& h) {
  std::string out;
  for (const auto& g : h.gpus) {
    out += (out.empty() ? "" : "; ") + g;
  }
  return out;
}

// The columns version 3 added to sessions, with their SQLite declarations.
const char* const kAddedSessionColumns[kAddedSessionColumnCount][2] = {
    {"host_class", "TEXT NOT NULL DEFAULT ''"},     {"hostname", "TEXT NOT NULL DEFAULT ''"},
    {"cpu_model", "TEXT NOT NULL DEFAULT ''"},      {"logical_cores", "INTEGER NOT NULL DEFAULT 0"},
    {"memory_bytes", "INTEGER NOT NULL DEFAULT 0"}, {"gpus", "TEXT NOT NULL DEFAULT ''"},
    {"os_name", "TEXT NOT NULL DEFAULT ''"},        {"architecture", "TEXT NOT NULL DEFAULT ''"},
    {"server_kind", "TEXT NOT NULL DEFAULT ''"},    {"server_version", "TEXT NOT NULL DEFAULT ''"},
    {"server_binary", "TEXT NOT NULL DEFAULT ''"},  {"kvbench_version", "TEXT NOT NULL DEFAULT ''"},
    {"fingerprint", "TEXT NOT NULL DEFAULT '{}'"},  {"calls_digest", "TEXT NOT NULL DEFAULT ''"},
    {"calls", "INTEGER NOT NULL DEFAULT 0"}};

std::string schema_for(Dialect d) {
  std::string calls = fmt::format(
      "CREATE TABLE IF NOT EXISTS calls (\n"
      "  session_id {} NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,\n",
      int_type(d));
  for (const auto& f : call_fields()) {
    calls +=
        fmt::format("  {} {}{},\n", f.name, column_type(f.type, d), f.nullable ? "" : " NOT NULL");
  }
  calls += "  record TEXT NOT NULL);";
  for (const auto& p : results::record_parts()) {
    calls += fmt::format(
        "\nCREATE TABLE IF NOT EXISTS {} (\n"
        "  session_id {} NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,\n"
        "  seq {} NOT NULL,\n",
        part_table(p), int_type(d), int_type(d));
    for (const auto& f : p.columns) {
      calls += fmt::format("  {} {},\n", f.name, column_type(f.type, d));
    }
    calls += "  PRIMARY KEY (session_id, seq));";
  }
  return fmt::format(fmt::runtime(std::string(kSchema)),
                     fmt::arg("id", d == Dialect::postgresql
                                        ? "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
                                        : "INTEGER PRIMARY KEY"),
                     fmt::arg("real", real_type(d)), fmt::arg("int", int_type(d)),
                     fmt::arg("calls", calls));
}

std::vector<SqlValue> call_row(std::int64_t session_id, const CallRecord& c) {
  std::vector<SqlValue> row = {session_id};
  for (const auto& f : call_fields()) {
    row.push_back(f.get(c));
  }
  row.emplace_back(to_json(c).dump());
  return row;
}

std::string insert_call() {
  std::string columns = "session_id";
  std::string values = "$1";
  int n = 1;
  for (const auto& f : call_fields()) {
    columns += fmt::format(", {}", f.name);
    values += fmt::format(", ${}", ++n);
  }
  return fmt::format("INSERT INTO calls ({}, record) VALUES ({}, ${})", columns, values, n + 1);
}

std::string part_table(const results::RecordPartInfo& p) {
  return "calls_" + p.key;
}

std::vector<SqlValue> part_row(std::int64_t session_id, const CallRecord& c,
                               const results::RecordPartInfo& p) {
  std::vector<SqlValue> row = {session_id, std::int64_t{c.seq}};
  for (const auto& f : p.columns) {
    row.push_back(f.get(c));
  }
  return row;
}

std::string insert_part(const results::RecordPartInfo& p) {
  std::string columns = "session_id, seq";
  std::string values = "$1, $2";
  int n = 2;
  for (const auto& f : p.columns) {
    columns += fmt::format(", {}", f.name);
    values += fmt::format(", ${}", ++n);
  }
  return fmt::format("INSERT INTO {} ({}) VALUES ({})", part_table(p), columns, values);
}

void History::create_schema() {
  db_->execute(schema_for(db_->dialect()));
  db_->query("INSERT INTO meta (key, value) VALUES ('schema_version', $1)",
             {std::to_string(kSchemaVersion)});
}

void History::migrate(int from) {
  // In the caller's transaction.
  if (from < 3) {
    migrate_to_3(from);
  }
  add_call_columns();
  // Version 6: the start_taus table; 7: the workloads' tables (every statement of the schema
  // creates only what is missing).
  db_->execute(schema_for(db_->dialect()));
  if (from < 7) {
    move_part_columns();
  }
  db_->query("UPDATE meta SET value = $1 WHERE key = 'schema_version'",
             {std::to_string(kSchemaVersion)});
}

void History::add_call_columns() {
  const auto have = db_->columns("calls");
  std::vector<const CallField*> added;
  for (const auto& f : call_fields()) {
    if (std::find(have.begin(), have.end(), f.name) != have.end()) {
      continue;
    }
    const char* type = column_type(f.type, db_->dialect());
    const std::string fill = f.nullable                        ? ""
                             : f.type == CallField::Type::text ? " NOT NULL DEFAULT ''"
                                                               : " NOT NULL DEFAULT 0";
    db_->execute(fmt::format("ALTER TABLE calls ADD COLUMN {} {}{}", f.name, type, fill));
    added.push_back(&f);
  }
  if (added.empty()) {
    return;
  }
  // The calls stored before: their new columns read from each one's whole record.
  std::string set;
  for (std::size_t i = 0; i < added.size(); ++i) {
    set += fmt::format("{}{} = ${}", i == 0 ? "" : ", ", added[i]->name, i + 1);
  }
  const std::string update = fmt::format("UPDATE calls SET {} WHERE session_id = ${} AND seq = ${}",
                                         set, added.size() + 1, added.size() + 2);
  std::vector<std::vector<SqlValue>> rows;
  for (const auto& row : db_->query("SELECT session_id, seq, record FROM calls")) {
    const auto j = nlohmann::json::parse(as_text(row[2]), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      continue;  // a record that no longer reads leaves its new columns empty
    }
    try {
      const CallRecord c = record_from_json(j);
      std::vector<SqlValue> values;
      for (const auto* f : added) {
        values.push_back(f->get(c));
      }
      values.emplace_back(as_int(row[0]));
      values.emplace_back(as_int(row[1]));
      rows.push_back(std::move(values));
    } catch (const nlohmann::json::exception&) {
    }
  }
  db_->execute_many(update, rows);
}

void History::move_part_columns() {
  std::map<std::string, std::vector<std::vector<SqlValue>>> rows;
  for (const auto& row : db_->query("SELECT session_id, seq, record FROM calls")) {
    const auto j = nlohmann::json::parse(as_text(row[2]), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      continue;  // a record that no longer reads keeps no part
    }
    try {
      const CallRecord c = record_from_json(j);
      if (const auto* p = results::record_part(c.part.key())) {
        rows[p->key].push_back(part_row(as_int(row[0]), c, *p));
      }
    } catch (const nlohmann::json::exception&) {
    } catch (const InputError&) {
    }
  }
  for (const auto& [key, part_rows] : rows) {
    db_->execute_many(insert_part(*results::record_part(key)), part_rows);
  }
  std::set<std::string> own = {"session_id", "record"};
  for (const auto& f : call_fields()) {
    own.insert(f.name);
  }
  for (const auto& column : db_->columns("calls")) {
    if (own.count(column) == 0) {
      db_->execute(fmt::format("ALTER TABLE calls DROP COLUMN {}", column));
    }
  }
}

void History::migrate_to_3(int from) {
  // Versions 1 and 2 were only ever SQLite files.
  if (from < 2) {
    db_->execute("ALTER TABLE sessions ADD COLUMN run_labels TEXT NOT NULL DEFAULT ''");
  }
  for (const auto& [name, declaration] : kAddedSessionColumns) {
    db_->execute(fmt::format("ALTER TABLE sessions ADD COLUMN {} {}", name, declaration));
  }
  db_->execute("ALTER TABLE session_values ADD COLUMN idx INTEGER NOT NULL DEFAULT 0");
  db_->execute("UPDATE session_values SET idx = rowid");
  create_schema();
  // The host of a session stored before: from its run folder, where that is still there.
  for (const auto& row : db_->query("SELECT id, run_dir FROM sessions ORDER BY id")) {
    const std::filesystem::path dir = as_text(row[1]);
    std::error_code ec;
    if (!std::filesystem::exists(dir / "run.json", ec)) {
      continue;
    }
    try {
      const auto run = session::load_run_inputs(dir);
      const auto& h = run.session.host;
      db_->query(
          "UPDATE sessions SET host_class = $1, hostname = $2, cpu_model = $3, logical_cores = "
          "$4, memory_bytes = $5, gpus = $6, os_name = $7, architecture = $8, server_kind = $9, "
          "server_version = $10, server_binary = $11, kvbench_version = $12, fingerprint = $13 "
          "WHERE id = $14",
          {run.session.host_class, h.hostname, h.cpu_model, std::int64_t{h.logical_cores},
           static_cast<std::int64_t>(h.memory_bytes), gpus_text(h), h.os_name, h.architecture,
           h.server_kind, h.server_version, h.server_binary, h.kvbench_version,
           nlohmann::json(h).dump(), as_int(row[0])});
      ++recovered_;
    } catch (const Error&) {  // a folder that no longer reads as a run keeps no fingerprint
    }
  }
}

}  // namespace kvbench::history
