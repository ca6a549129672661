#pragma once
// The history of accepted sessions for the cross-session gate: one SQLite file holding, per run,
// its session values (metric, condition, variant -> fitted value at the reference point) with the
// run id, time, scenario hash, git revision and machine.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/gate/session.h"

struct sqlite3;

namespace kvbench::gate {

struct SessionInfo {
  std::string run_id;
  std::string recorded_at;  // UTC, when the run started
  std::string label;
  std::string scenario_name;
  std::string scenario_hash;
  std::string git_revision;
  std::string machine;  // host name and CPU
  std::string run_dir;
  // The run's own labels (`kvbench run --label k=v`), "k=v" joined by ", " in name order.
  std::string run_labels;
};

struct HistoryRow {
  std::int64_t session_id = 0;
  SessionInfo info;
  std::string metric;
  std::string condition;  // condition_label() of the gated condition
  std::string variant;
  double value = 0.0;
  int ref_prompt_tokens = 0;
  int ref_num_ctx = 0;
  std::int64_t n = 0;
};

class HistoryDb {
 public:
  // Opens (create: creating if missing) the history file. Throws InputError when it cannot be
  // opened, or (create false) does not exist.
  HistoryDb(const std::filesystem::path& path, bool create);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  // Stores one session and its values (NaN values are skipped) in one transaction; returns the
  // session id. Throws InputError when the run id is already stored.
  std::int64_t add(const SessionInfo& info, const std::vector<SessionValue>& values);

  // Every stored value, oldest session first.
  std::vector<HistoryRow> rows() const;

  // The values of the last `limit` sessions of one scenario hash, metric, condition and variant,
  // oldest first, leaving out the session of `exclude_run_id`.
  std::vector<double> recent(const std::string& scenario_hash, const std::string& metric,
                             const std::string& condition, const std::string& variant,
                             std::size_t limit, const std::string& exclude_run_id) const;

  // The number of stored sessions.
  std::size_t sessions() const;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

}  // namespace kvbench::gate
