// The start-to-start components in the history: what `kvbench repeat --history` measured, and
// what `kvbench run --history` gives a run whose effects rest on too few server starts.

#include <set>
#include <tuple>

#include "harness/history/store.h"

namespace kvbench::history {

void History::add_start_taus(const std::vector<results::StartTau>& taus,
                             const std::string& scenario) {
  std::vector<std::vector<SqlValue>> rows;
  for (const auto& t : taus) {
    rows.push_back({t.measured, t.host_class, t.server, t.model, t.metric, t.term,
                    std::int64_t{t.relative ? 1 : 0}, t.tau, t.df,
                    static_cast<std::int64_t>(t.runs), t.starts, scenario});
  }
  db_->begin();
  try {
    db_->execute_many(
        "INSERT INTO start_taus (measured, host_class, server, model, metric, term, relative, "
        "tau, df, runs, starts, scenario_name) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
        "$11, $12)",
        rows);
    db_->commit();
  } catch (...) {
    db_->rollback();
    throw;
  }
}

std::vector<results::StartTau> History::start_taus(const std::string& host_class,
                                                   const std::string& server,
                                                   const std::string& model) const {
  std::vector<results::StartTau> out;
  if (version_ == 0) {
    return out;
  }
  std::set<std::tuple<std::string, std::string, bool>> seen;
  for (const auto& r :
       db_->query("SELECT measured, metric, term, relative, tau, df, runs, starts FROM start_taus "
                  "WHERE host_class = $1 AND server = $2 AND model = $3 ORDER BY measured DESC, "
                  "id DESC",
                  {host_class, server, model})) {
    results::StartTau t;
    t.measured = as_text(r[0]);
    t.metric = as_text(r[1]);
    t.term = as_text(r[2]);
    t.relative = as_int(r[3]) != 0;
    t.tau = as_real(r[4]);
    t.df = as_real(r[5]);
    t.runs = static_cast<std::size_t>(as_int(r[6]));
    t.starts = as_real(r[7]);
    t.host_class = host_class;
    t.server = server;
    t.model = model;
    if (seen.emplace(t.metric, t.term, t.relative).second) {
      out.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace kvbench::history
