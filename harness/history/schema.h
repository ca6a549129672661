#pragma once
// The history's tables, in both stores: the schema of the current version, the session columns
// version 3 added, and a call's row of the calls table with its INSERT (both from the record's
// columns, which a migration adds to an older calls table), and of each workload part's table.
// schema.cpp also holds History::create_schema and History::migrate, which use them.

#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/record.h"
#include "harness/history/sql.h"
#include "harness/results/record_parts.h"
#include "harness/session/host.h"

namespace kvbench::history {

// CREATE TABLE statements of the current version for `d`.
std::string schema_for(Dialect d);

// The columns version 3 added to sessions: name and SQLite declaration.
constexpr std::size_t kAddedSessionColumnCount = 15;
extern const char* const kAddedSessionColumns[kAddedSessionColumnCount][2];

// The sessions table's gpus column: the host's GPUs, "; " between them.
std::string gpus_text(const session::HostFingerprint& h);

// The calls table's row of `c` in session `session_id`, in insert_call()'s order: the session,
// the call field list's values, the whole record as JSON.
std::vector<SqlValue> call_row(std::int64_t session_id, const CallRecord& c);
std::string insert_call();
// A workload part's table (calls_conversation, ...), its row of `c` (the session, the call's seq,
// the part's columns) and its INSERT.
std::string part_table(const results::RecordPartInfo& p);
std::vector<SqlValue> part_row(std::int64_t session_id, const CallRecord& c,
                               const results::RecordPartInfo& p);
std::string insert_part(const results::RecordPartInfo& p);

}  // namespace kvbench::history
