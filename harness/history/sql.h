#pragma once
// The SQL a history needs, over either of its stores: SQLite (one file, the embedded default) and
// PostgreSQL (a team's database, through libpqxx). Statements are written once for both: $1, $2,
// ... placeholders, numbered in order of first use, and the SQL both dialects share.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "harness/core/call_fields.h"

namespace kvbench::history {

// A parameter or a column's value: NULL, an integer, a real or text.
using SqlValue = FieldValue;
using SqlRow = std::vector<SqlValue>;

// The value as text, integer or real: PostgreSQL returns text, which these parse; NULL is "", 0.
std::string as_text(const SqlValue& v);
std::int64_t as_int(const SqlValue& v);
double as_real(const SqlValue& v);

enum class Dialect { sqlite, postgresql };

// One open database. Errors throw kvbench::Error naming where() (a lost connection, a failed
// statement); opening throws InputError when the database cannot be reached or read.
class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  virtual Dialect dialect() const = 0;
  // Where it is, fit to print: the file, or the URL without its user part and query.
  virtual std::string where() const = 0;
  virtual bool read_only() const = 0;
  // One or more statements without parameters (DDL).
  virtual void execute(const std::string& sql) = 0;
  // One statement; its rows.
  virtual std::vector<SqlRow> query(const std::string& sql,
                                    const std::vector<SqlValue>& params = {}) = 0;
  // One statement once per parameter list, prepared once.
  virtual void execute_many(const std::string& sql,
                            const std::vector<std::vector<SqlValue>>& rows) = 0;
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  // The columns of `table`, in order; empty when there is no such table.
  virtual std::vector<std::string> columns(const std::string& table) = 0;
};

// Whether `where` names a PostgreSQL database (postgresql:// or postgres://) rather than a file.
bool is_postgresql_url(std::string_view where);

// Whether this build has the PostgreSQL store (libpqxx).
bool postgresql_available();

// Opens a SQLite file; `create` makes it when missing (never with read_only). Throws InputError
// when it is missing (and not created) or cannot be opened.
std::unique_ptr<SqlConnection> open_sqlite(const std::filesystem::path& path, bool read_only,
                                           bool create);

// Connects to a PostgreSQL URL (postgresql://USER@HOST:PORT/DB?...). A password in it is refused
// (InputError): libpq reads it from PGPASSWORD or ~/.pgpass. Read-only connections set
// default_transaction_read_only. Throws InputError when the server cannot be reached or the build
// lacks libpqxx.
std::unique_ptr<SqlConnection> open_postgresql(const std::string& url, bool read_only);

// $N placeholders rewritten as ?N, for SQLite.
std::string sqlite_placeholders(std::string_view sql);

}  // namespace kvbench::history
