// The PostgreSQL store of a history, through libpqxx; without it, a clear refusal.

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/url.h"
#include "harness/history/sql.h"

#ifdef KVBENCH_HAVE_POSTGRESQL
#include <pqxx/pqxx>
#endif

namespace kvbench::history {

namespace {

// Whether the URL carries a password: in its user part (user:password@) or as a parameter.
bool carries_password(std::string_view url) {
  const std::size_t scheme = url.find("://");
  const std::size_t begin = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t end = std::min(url.find_first_of("/?#", begin), url.size());
  const std::string_view authority = url.substr(begin, end - begin);
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos && authority.substr(0, at).find(':') != std::string_view::npos) {
    return true;
  }
  const std::size_t query = url.find('?');
  if (query == std::string_view::npos) {
    return false;
  }
  std::string rest(url.substr(query + 1));
  for (auto& c : rest) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return rest.starts_with("password=") || rest.find("&password=") != std::string::npos;
}

#ifdef KVBENCH_HAVE_POSTGRESQL

std::vector<std::string> texts_of(const std::vector<SqlValue>& params) {
  std::vector<std::string> texts;
  texts.reserve(params.size());
  for (const auto& p : params) {
    texts.push_back(as_text(p));
  }
  return texts;
}

std::vector<const char*> pointers_of(const std::vector<SqlValue>& params,
                                     const std::vector<std::string>& texts) {
  std::vector<const char*> out;
  out.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    out.push_back(std::holds_alternative<std::monostate>(params[i]) ? nullptr : texts[i].c_str());
  }
  return out;
}

// Running a statement with its parameters (nullptr: NULL): libpqxx 7.10 (Debian 13) takes a
// pqxx::params and deprecates the dynamic parameters that 6.4 (Debian 12) has.
#if PQXX_VERSION_MAJOR > 7 || (PQXX_VERSION_MAJOR == 7 && PQXX_VERSION_MINOR >= 10)
pqxx::params params_of(const std::vector<const char*>& ptrs) {
  pqxx::params p;
  for (const char* v : ptrs) {
    if (v == nullptr) {
      p.append();
    } else {
      p.append(pqxx::zview(v));
    }
  }
  return p;
}
pqxx::result exec_with(pqxx::transaction_base& t, const std::string& sql,
                       const std::vector<const char*>& ptrs) {
  return t.exec(sql, params_of(ptrs));
}
void exec_prepared_with(pqxx::transaction_base& t, const std::string& name,
                        const std::vector<const char*>& ptrs) {
  t.exec(pqxx::prepped{name}, params_of(ptrs));
}
#else
pqxx::result exec_with(pqxx::transaction_base& t, const std::string& sql,
                       const std::vector<const char*>& ptrs) {
  return t.exec_params(sql, pqxx::prepare::make_dynamic_params(ptrs));
}
void exec_prepared_with(pqxx::transaction_base& t, const std::string& name,
                        const std::vector<const char*>& ptrs) {
  t.exec_prepared(name, pqxx::prepare::make_dynamic_params(ptrs));
}
#endif

std::vector<SqlRow> rows_of(const pqxx::result& result) {
  std::vector<SqlRow> rows;
  rows.reserve(static_cast<std::size_t>(result.size()));
  for (const auto& r : result) {
    SqlRow row;
    for (const auto& f : r) {
      if (f.is_null()) {
        row.emplace_back(std::monostate{});
      } else {
        row.emplace_back(std::string(f.c_str(), f.size()));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

class PostgresConnection : public SqlConnection {
 public:
  PostgresConnection(const std::string& url, bool read_only)
      : where_(url_for_display(url)), read_only_(read_only) {
    try {
      conn_ = std::make_unique<pqxx::connection>(url);
      if (read_only) {
        pqxx::nontransaction t(*conn_);
        t.exec("SET default_transaction_read_only = on");
      }
      pqxx::nontransaction t(*conn_);
      t.exec("SET client_min_messages = warning");
    } catch (const std::exception& e) {
      throw InputError(fmt::format("{}: cannot connect to the history: {}", where_, e.what()));
    }
  }

  Dialect dialect() const override { return Dialect::postgresql; }
  std::string where() const override { return where_; }
  bool read_only() const override { return read_only_; }

  void execute(const std::string& sql) override {
    guarded([&](pqxx::transaction_base& t) { t.exec(sql); });
  }
  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params) override {
    std::vector<SqlRow> rows;
    guarded([&](pqxx::transaction_base& t) {
      const auto texts = texts_of(params);
      const auto ptrs = pointers_of(params, texts);
      rows = rows_of(exec_with(t, sql, ptrs));
    });
    return rows;
  }
  void execute_many(const std::string& sql,
                    const std::vector<std::vector<SqlValue>>& rows) override {
    if (rows.empty()) {
      return;
    }
    const std::string name = fmt::format("kvbench_{}", ++prepared_);
    guarded([&](pqxx::transaction_base& t) {
      conn_->prepare(name, sql);
      for (const auto& params : rows) {
        const auto texts = texts_of(params);
        const auto ptrs = pointers_of(params, texts);
        exec_prepared_with(t, name, ptrs);
      }
      conn_->unprepare(name);
    });
  }
  void begin() override {
    try {
      work_ = std::make_unique<pqxx::work>(*conn_);
    } catch (const std::exception& e) {
      throw Error(fmt::format("{}: {}", where_, e.what()));
    }
  }
  void commit() override {
    try {
      auto work = std::move(work_);
      work->commit();
    } catch (const std::exception& e) {
      throw Error(fmt::format("{}: the transaction did not commit: {}", where_, e.what()));
    }
  }
  void rollback() noexcept override {
    try {
      if (work_) {
        work_->abort();
      }
    } catch (...) {  // a lost connection has rolled it back already
    }
    work_.reset();
  }
  std::vector<std::string> columns(const std::string& table) override {
    std::vector<std::string> out;
    for (const auto& row :
         query("SELECT column_name FROM information_schema.columns WHERE table_schema = "
               "current_schema() AND table_name = $1 ORDER BY ordinal_position",
               {table})) {
      out.push_back(as_text(row[0]));
    }
    return out;
  }

 private:
  // Runs `f` in the open transaction, or in one of its own that commits at once.
  template <typename F>
  void guarded(F&& f) {
    try {
      if (work_) {
        f(*work_);
      } else {
        pqxx::nontransaction t(*conn_);
        f(t);
      }
    } catch (const std::exception& e) {
      throw Error(fmt::format("{}: {}", where_, e.what()));
    }
  }

  std::string where_;
  bool read_only_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<pqxx::work> work_;
  int prepared_ = 0;
};

#endif

}  // namespace

bool postgresql_available() {
#ifdef KVBENCH_HAVE_POSTGRESQL
  return true;
#else
  return false;
#endif
}

std::unique_ptr<SqlConnection> open_postgresql(const std::string& url, bool read_only) {
  if (carries_password(url)) {
    throw InputError(fmt::format(
        "{}: the history URL carries a password: leave it out and set PGPASSWORD or use "
        "~/.pgpass, which libpq reads",
        url_for_display(url)));
  }
#ifdef KVBENCH_HAVE_POSTGRESQL
  return std::make_unique<PostgresConnection>(url, read_only);
#else
  (void)read_only;
  throw InputError(fmt::format(
      "{}: this kvbench was built without PostgreSQL (install libpqxx-dev and build again)",
      url_for_display(url)));
#endif
}

}  // namespace kvbench::history
