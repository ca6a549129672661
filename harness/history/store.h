#pragma once
// The history of accepted sessions: per run, its session values (metric, condition, variant ->
// fitted value at the reference point), the run's facts and host fingerprint, and every call
// (one row each, flattened, with the whole record beside). One schema, versioned, in either store:
// a SQLite file (the embedded default) or a PostgreSQL database shared by many hosts.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/record.h"
#include "harness/history/sql.h"
#include "harness/results/start_tau.h"
#include "harness/session/run_inputs.h"
#include "harness/session/session.h"
#include "harness/session/session_info.h"

namespace kvbench::history {

// 1: sessions and session_values; 2: sessions.run_labels; 3: host fingerprints, the calls table,
// the meta table that holds this number; 4: the calls table takes every field of the call field
// list (history_tokens, conversations and reuse added); 5: and a trace replay's fields
// (trace_index ... mismatch), and wait_ms where a version 4 history lacked it; 6: start_taus,
// the start-to-start components `kvbench repeat --history` measured; 7: a workload's columns
// left the calls table for its own, calls_<workload> (calls_conversation, calls_trace), one row
// per call that carries its part, keyed by session_id and seq.
inline constexpr int kSchemaVersion = 7;

enum class Access { read, write };

struct StoredValue {
  std::string metric;
  std::string condition;  // condition_label() of the gated condition
  std::string variant;
  double value = 0.0;
  int ref_prompt_tokens = 0;
  int ref_num_ctx = 0;
  std::int64_t n = 0;
};

struct HistoryRow {
  std::int64_t session_id = 0;
  session::SessionInfo info;
  StoredValue value;
};

// One session as stored, exported and imported.
struct Session {
  std::int64_t id = 0;
  session::SessionInfo info;
  std::vector<StoredValue> values;
  std::vector<CallRecord> calls;
};

struct AddResult {
  std::int64_t id = 0;
  bool added = false;  // false: the same run was already stored; nothing was written
};

struct RecentQuery {
  std::string scenario_hash;
  std::string host_class;  // empty: every host class
  std::string metric;
  std::string condition;
  std::string variant;
  std::size_t limit = 0;
  std::string exclude_run_id;
};

class History {
 public:
  // Opens a history: a SQLite file, or a postgresql:// URL. Writing creates the file or the tables
  // when missing and migrates an older schema first (migrated_from() tells). Reading opens
  // read-only and refuses an older schema (InputError naming `kvbench history migrate`). Either
  // refuses a schema newer than kSchemaVersion. Throws InputError when it cannot be opened.
  static std::unique_ptr<History> open(const std::string& where, Access access);

  History(std::unique_ptr<SqlConnection> db, Access access);

  // Stores a session, its values (NaN skipped) and calls in one transaction: all or nothing.
  // The same run (run id and calls digest) already stored: nothing written, added false. A
  // session of an older schema without a calls digest is replaced. A run stored with other calls
  // (extended or resumed since) is refused with InputError.
  AddResult add(const Session& s);

  // Every stored value, oldest session first.
  std::vector<HistoryRow> rows() const;
  // Every session's id, oldest first.
  std::vector<std::int64_t> session_ids() const;
  // Every session's facts (no values or calls), oldest first; `id` set.
  std::vector<Session> list() const;
  // One session with its values and calls.
  Session session(std::int64_t id) const;
  // The values of the last `limit` sessions (by recorded_at) of one scenario and host class,
  // metric, condition and variant, oldest first, leaving out the session of `exclude_run_id`.
  std::vector<double> recent(const RecentQuery& q) const;
  // How many sessions of `scenario_hash` each host class holds.
  std::vector<std::pair<std::string, std::size_t>> host_classes(
      const std::string& scenario_hash) const;
  // The number of stored sessions.
  std::size_t sessions() const;

  // Stores start-to-start components (each with its machine class, server build and model), all
  // or nothing; `scenario` names what they were measured with.
  void add_start_taus(const std::vector<results::StartTau>& taus, const std::string& scenario);
  // The newest component of every effect (metric, term, form) measured on this machine class,
  // server build and model.
  std::vector<results::StartTau> start_taus(const std::string& host_class,
                                            const std::string& server,
                                            const std::string& model) const;

  int schema_version() const { return version_; }
  int migrated_from() const { return migrated_from_; }
  // Sessions of the older schema whose host fingerprint the migration read from their run folder.
  std::size_t fingerprints_recovered() const { return recovered_; }
  std::string where() const { return db_->where(); }
  SqlConnection& sql() const { return *db_; }

 private:
  void migrate(int from);
  // The calls of session `id`: their rows of the calls table and of their workloads' tables.
  void add_calls(std::int64_t id, const std::vector<CallRecord>& calls);
  void migrate_to_3(int from);
  // Adds to the calls table every field of the call field list it lacks, filled from the records.
  void add_call_columns();
  // Version 7: each workload's table filled from the records of the calls stored before, and the
  // calls table's columns that are no longer the record's own dropped.
  void move_part_columns();
  void create_schema();
  int stored_version() const;

  std::unique_ptr<SqlConnection> db_;
  Access access_;
  int version_ = 0;  // 0: no tables (a new, empty database opened for reading)
  int migrated_from_ = 0;
  std::size_t recovered_ = 0;
};

// The session of a loaded run: its facts, the values (session::session_values of the scenario's
// gate section), its calls.
Session session_of(const session::RunInputs& run, const std::string& label,
                   const std::vector<session::SessionValue>& values);

}  // namespace kvbench::history
