#include "harness/history/store.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/history/schema.h"
#include "harness/session/host.h"
#include "harness/session/where.h"

namespace kvbench::history {

namespace {

constexpr const char* kSessionColumns =
    "s.id, s.run_id, s.recorded_at, s.label, s.scenario_name, s.scenario_hash, s.git_revision, "
    "s.machine, s.run_dir, s.run_labels, s.host_class, s.fingerprint, s.calls_digest, s.calls";
constexpr int kSessionColumnCount = 14;

session::SessionInfo info_of(const SqlRow& r) {
  session::SessionInfo i;
  i.run_id = as_text(r[1]);
  i.recorded_at = as_text(r[2]);
  i.label = as_text(r[3]);
  i.scenario_name = as_text(r[4]);
  i.scenario_hash = as_text(r[5]);
  i.git_revision = as_text(r[6]);
  i.machine = as_text(r[7]);
  i.run_dir = as_text(r[8]);
  i.run_labels = as_text(r[9]);
  i.host_class = as_text(r[10]);
  try {
    i.host = nlohmann::json::parse(as_text(r[11])).get<session::HostFingerprint>();
  } catch (const nlohmann::json::exception&) {
    i.host = {};
  }
  i.calls_digest = as_text(r[12]);
  i.calls = as_int(r[13]);
  return i;
}

// Runs `f` in a transaction: committed when it returns, rolled back when it throws.
template <typename F>
auto in_transaction(SqlConnection& db, F&& f) {
  db.begin();
  try {
    auto out = f();
    db.commit();
    return out;
  } catch (...) {
    db.rollback();
    throw;
  }
}

}  // namespace

std::unique_ptr<History> History::open(const std::string& where, Access access) {
  const bool read = access == Access::read;
  auto db =
      is_postgresql_url(where) ? open_postgresql(where, read) : open_sqlite(where, read, !read);
  return std::make_unique<History>(std::move(db), access);
}

History::History(std::unique_ptr<SqlConnection> db, Access access)
    : db_(std::move(db)), access_(access) {
  const auto refuse_newer = [&](int stored) {
    if (stored > kSchemaVersion) {
      throw InputError(fmt::format(
          "{}: the history has schema version {}, newer than this kvbench knows ({}): use a "
          "newer kvbench",
          where(), stored, kSchemaVersion));
    }
  };
  int stored = 0;
  try {
    stored = stored_version();
  } catch (const Error& e) {
    throw InputError(fmt::format("{} (is it a kvbench history?)", e.what()));
  }
  refuse_newer(stored);
  migrated_from_ = stored;
  if (access_ == Access::read) {
    if (stored != 0 && stored < kSchemaVersion) {
      throw InputError(fmt::format(
          "{}: the history has schema version {}; this kvbench reads version {}: run kvbench "
          "history migrate {} (add, ingest and import migrate it too)",
          where(), stored, kSchemaVersion, where()));
    }
    version_ = stored;
    return;
  }
  if (stored == kSchemaVersion) {
    version_ = stored;
    return;
  }
  // Creating or migrating: one writer at a time (hosts of a matrix may all start on a new
  // database at once), the version read again under the lock.
  in_transaction(*db_, [&] {
    if (db_->dialect() == Dialect::postgresql) {
      db_->query("SELECT pg_advisory_xact_lock(6151806)");
    }
    stored = stored_version();
    refuse_newer(stored);
    migrated_from_ = stored;
    if (stored == 0) {
      create_schema();
    } else if (stored < kSchemaVersion) {
      migrate(stored);
    }
    return 0;
  });
  version_ = kSchemaVersion;
}

int History::stored_version() const {
  const auto meta = db_->columns("meta");
  if (!meta.empty()) {
    const auto rows = db_->query("SELECT value FROM meta WHERE key = 'schema_version'");
    if (rows.empty()) {
      throw Error(where() + ": its meta table holds no schema_version");
    }
    return static_cast<int>(as_int(rows.front()[0]));
  }
  const auto sessions = db_->columns("sessions");
  if (sessions.empty()) {
    return 0;
  }
  const bool labels = std::find(sessions.begin(), sessions.end(), "run_labels") != sessions.end();
  return labels ? 2 : 1;
}

AddResult History::add(const Session& s) {
  const auto& info = s.info;
  return in_transaction(*db_, [&] {
    const auto existing =
        db_->query("SELECT id, calls_digest FROM sessions WHERE run_id = $1", {info.run_id});
    if (!existing.empty()) {
      const auto id = as_int(existing.front()[0]);
      const auto digest = as_text(existing.front()[1]);
      if (digest == info.calls_digest) {
        return AddResult{id, false};
      }
      if (!digest.empty()) {
        throw InputError(fmt::format(
            "{}: run {} is stored (session {}) with other calls: was it extended or resumed since "
            "it was stored?",
            where(), info.run_id, id));
      }
      // Stored by an older kvbench, without its calls: replaced by the whole session.
      db_->query("DELETE FROM session_values WHERE session_id = $1", {id});
      db_->query("DELETE FROM calls WHERE session_id = $1", {id});
      for (const auto& p : results::record_parts()) {
        db_->query(fmt::format("DELETE FROM {} WHERE session_id = $1", part_table(p)), {id});
      }
      db_->query("DELETE FROM sessions WHERE id = $1", {id});
    }
    const auto& h = info.host;
    const auto rows = db_->query(
        "INSERT INTO sessions (run_id, recorded_at, label, scenario_name, scenario_hash, "
        "git_revision, machine, run_dir, run_labels, host_class, hostname, cpu_model, "
        "logical_cores, memory_bytes, gpus, os_name, architecture, server_kind, server_version, "
        "server_binary, kvbench_version, fingerprint, calls_digest, calls) VALUES ($1, $2, $3, "
        "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, "
        "$23, $24) RETURNING id",
        {info.run_id,
         info.recorded_at,
         info.label,
         info.scenario_name,
         info.scenario_hash,
         info.git_revision,
         info.machine,
         info.run_dir,
         info.run_labels,
         info.host_class,
         h.hostname,
         h.cpu_model,
         std::int64_t{h.logical_cores},
         static_cast<std::int64_t>(h.memory_bytes),
         gpus_text(h),
         h.os_name,
         h.architecture,
         h.server_kind,
         h.server_version,
         h.server_binary,
         h.kvbench_version,
         nlohmann::json(h).dump(),
         info.calls_digest,
         static_cast<std::int64_t>(s.calls.size())});
    const std::int64_t id = as_int(rows.at(0).at(0));
    std::vector<std::vector<SqlValue>> values;
    for (const auto& v : s.values) {
      if (std::isfinite(v.value)) {
        values.push_back({id, static_cast<std::int64_t>(values.size()), v.metric, v.condition,
                          v.variant, v.value, std::int64_t{v.ref_prompt_tokens},
                          std::int64_t{v.ref_num_ctx}, v.n});
      }
    }
    db_->execute_many(
        "INSERT INTO session_values (session_id, idx, metric, condition, variant, value, "
        "ref_prompt_tokens, ref_num_ctx, n) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        values);
    add_calls(id, s.calls);
    return AddResult{id, true};
  });
}

void History::add_calls(std::int64_t id, const std::vector<CallRecord>& calls) {
  std::vector<std::vector<SqlValue>> rows;
  rows.reserve(calls.size());
  for (const auto& c : calls) {
    rows.push_back(call_row(id, c));
  }
  db_->execute_many(insert_call(), rows);
  for (const auto& p : results::record_parts()) {
    std::vector<std::vector<SqlValue>> carried;
    for (const auto& c : calls) {
      if (c.part.key() == p.key) {
        carried.push_back(part_row(id, c, p));
      }
    }
    if (!carried.empty()) {
      db_->execute_many(insert_part(p), carried);
    }
  }
}

namespace {

// A session_values row's columns from `c` on: metric, condition, variant, value,
// ref_prompt_tokens, ref_num_ctx, n.
StoredValue value_at(const SqlRow& r, std::size_t c) {
  return {as_text(r[c]),
          as_text(r[c + 1]),
          as_text(r[c + 2]),
          as_real(r[c + 3]),
          static_cast<int>(as_int(r[c + 4])),
          static_cast<int>(as_int(r[c + 5])),
          as_int(r[c + 6])};
}

}  // namespace

std::vector<HistoryRow> History::rows() const {
  if (version_ == 0) {
    return {};
  }
  std::vector<HistoryRow> out;
  for (const auto& r : db_->query(fmt::format("SELECT {}, v.metric, v.condition, v.variant, "
                                              "v.value, v.ref_prompt_tokens, v.ref_num_ctx, v.n "
                                              "FROM sessions s JOIN session_values v ON "
                                              "v.session_id = s.id ORDER BY s.recorded_at, s.id, "
                                              "v.idx",
                                              kSessionColumns))) {
    out.push_back({as_int(r[0]), info_of(r), value_at(r, kSessionColumnCount)});
  }
  return out;
}

std::vector<std::int64_t> History::session_ids() const {
  std::vector<std::int64_t> out;
  if (version_ == 0) {
    return out;
  }
  for (const auto& r : db_->query("SELECT id FROM sessions ORDER BY recorded_at, id")) {
    out.push_back(as_int(r[0]));
  }
  return out;
}

std::vector<Session> History::list() const {
  std::vector<Session> out;
  if (version_ == 0) {
    return out;
  }
  for (const auto& r : db_->query(fmt::format(
           "SELECT {} FROM sessions s ORDER BY s.recorded_at, s.id", kSessionColumns))) {
    Session s;
    s.id = as_int(r[0]);
    s.info = info_of(r);
    out.push_back(std::move(s));
  }
  return out;
}

Session History::session(std::int64_t id) const {
  const auto found =
      db_->query(fmt::format("SELECT {} FROM sessions s WHERE s.id = $1", kSessionColumns), {id});
  if (found.empty()) {
    throw InputError(fmt::format("{}: no session {}", where(), id));
  }
  Session s;
  s.id = id;
  s.info = info_of(found.front());
  for (const auto& r : db_->query("SELECT metric, condition, variant, value, ref_prompt_tokens, "
                                  "ref_num_ctx, n FROM session_values WHERE session_id = $1 "
                                  "ORDER BY idx",
                                  {id})) {
    s.values.push_back(value_at(r, 0));
  }
  for (const auto& r :
       db_->query("SELECT record FROM calls WHERE session_id = $1 ORDER BY seq", {id})) {
    s.calls.push_back(record_from_json(nlohmann::json::parse(as_text(r[0]))));
  }
  return s;
}

std::vector<double> History::recent(const RecentQuery& q) const {
  std::vector<double> out;
  if (version_ == 0) {
    return out;
  }
  const bool any_host = q.host_class.empty();
  const auto rows = db_->query(
      fmt::format("SELECT value FROM (SELECT s.recorded_at AS recorded_at, s.id AS id, v.value AS "
                  "value FROM sessions s JOIN session_values v ON v.session_id = s.id WHERE "
                  "s.scenario_hash = $1 AND v.metric = $2 AND v.condition = $3 AND v.variant = "
                  "$4 AND s.run_id != $5{} ORDER BY s.recorded_at DESC, s.id DESC LIMIT {}) AS "
                  "latest ORDER BY recorded_at, id",
                  any_host ? "" : " AND s.host_class = $6", q.limit),
      any_host ? std::vector<SqlValue>{q.scenario_hash, q.metric, q.condition, q.variant,
                                       q.exclude_run_id}
               : std::vector<SqlValue>{q.scenario_hash, q.metric, q.condition, q.variant,
                                       q.exclude_run_id, q.host_class});
  for (const auto& r : rows) {
    out.push_back(as_real(r[0]));
  }
  return out;
}

std::vector<std::pair<std::string, std::size_t>> History::host_classes(
    const std::string& scenario_hash) const {
  std::vector<std::pair<std::string, std::size_t>> out;
  if (version_ == 0) {
    return out;
  }
  for (const auto& r : db_->query("SELECT host_class, COUNT(*) FROM sessions WHERE scenario_hash "
                                  "= $1 GROUP BY host_class ORDER BY host_class",
                                  {scenario_hash})) {
    out.emplace_back(as_text(r[0]), static_cast<std::size_t>(as_int(r[1])));
  }
  return out;
}

std::size_t History::sessions() const {
  if (version_ == 0) {
    return 0;
  }
  return static_cast<std::size_t>(as_int(db_->query("SELECT COUNT(*) FROM sessions").at(0).at(0)));
}

Session session_of(const session::RunInputs& run, const std::string& label,
                   const std::vector<session::SessionValue>& values) {
  Session s;
  s.info = run.session;
  s.info.label = label;
  for (const auto& v : values) {
    StoredValue sv;
    sv.metric = v.metric;
    sv.condition = session::condition_label(v.where);
    sv.variant = v.variant;
    sv.value = v.value;
    sv.ref_prompt_tokens = v.ref_prompt_tokens;
    sv.ref_num_ctx = v.ref_num_ctx;
    sv.n = static_cast<std::int64_t>(v.n);
    s.values.push_back(std::move(sv));
  }
  s.calls = run.loaded.calls;
  return s;
}

}  // namespace kvbench::history
