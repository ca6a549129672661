#include "harness/cli/start_history.h"

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/history/store.h"
#include "harness/results/results.h"
#include "harness/session/host.h"

namespace kvbench::cli {

namespace {

// The machine class, server build and model a run's starts belong to.
struct StartKey {
  std::string host_class;
  std::string server;
  std::string model;
  bool attached = false;
};

StartKey start_key(const results::RunManifest& run) {
  const auto host = session::host_fingerprint(run);
  StartKey k;
  k.host_class = session::host_class(host);
  k.server = host.server_version;
  if (run.model.is_object()) {
    k.model = run.model.value("name", run.model.value("path", std::string()));
  }
  k.attached = run.server.is_object() && run.server.value("mode", "") == "attached";
  return k;
}

std::string where_of(const StartKey& k) {
  return fmt::format("machine class {}, server {}, model {}", k.host_class,
                     k.server.empty() ? "?" : k.server, k.model.empty() ? "?" : k.model);
}

}  // namespace

void add_start_history_option(CLI::App* cmd, std::string& history, const std::string& help) {
  cmd->add_option("--history", history, help + " (default: $KVBENCH_HISTORY)")->type_name("DB");
}

std::string start_history(const std::string& flag) {
  if (!flag.empty()) {
    return flag;
  }
  const char* env = std::getenv("KVBENCH_HISTORY");
  return env != nullptr ? std::string(env) : std::string();
}

void check_start_history(const std::string& history) {
  if (!history.empty()) {
    history::History::open(history, history::Access::read);
  }
}

void check_start_history_writable(const std::string& history) {
  if (!history.empty()) {
    history::History::open(history, history::Access::write);
  }
}

void give_start_taus(const std::filesystem::path& run_dir, const std::string& history) {
  if (history.empty()) {
    return;
  }
  auto run = results::load_manifest(run_dir);
  const StartKey key = start_key(run);
  if (key.attached) {
    fmt::print(stderr,
               "start-to-start: an attached server is one start of its own; nothing from {} is "
               "added\n",
               history);
    return;
  }
  const auto db = history::History::open(history, history::Access::read);
  auto taus = db->start_taus(key.host_class, key.server, key.model);
  if (taus.empty()) {
    fmt::print(stderr,
               "start-to-start: {} holds no component for {}; effects on fewer than 4 starts "
               "cover this start only\n",
               history, where_of(key));
    return;
  }
  fmt::print(stderr, "start-to-start: {} component(s) from {} (newest {}) for {}\n", taus.size(),
             history, taus.front().measured, where_of(key));
  run.start_tau = std::move(taus);
  results::save_manifest(run_dir, run);
}

void store_start_taus(const report::RepeatReport& r, const std::vector<report::RepeatRun>& runs,
                      const std::string& history) {
  if (history.empty() || runs.empty()) {
    return;
  }
  const StartKey key{runs.front().host_class, runs.front().server, runs.front().model,
                     runs.front().attached};
  for (const auto& run : runs) {
    if (run.attached) {
      fmt::print(stderr,
                 "start-to-start: nothing stored in {}: {} ran on an attached server, one start "
                 "for every run\n",
                 history, run.dir);
      return;
    }
    if (run.host_class != key.host_class || run.server != key.server || run.model != key.model) {
      fmt::print(stderr,
                 "start-to-start: nothing stored in {}: {} ran on another machine class, server "
                 "or model than {}\n",
                 history, run.dir, runs.front().dir);
      return;
    }
  }
  const std::string now = utc_now_rfc3339();
  std::vector<results::StartTau> taus;
  for (const auto& e : r.effects) {
    // What the runs' own intervals left out: the start-to-start part where they rested on too
    // few starts, and on any number of starts what the machine did between the runs.
    if (e.estimates.size() < 3 || !std::isfinite(e.across.tau2)) {
      continue;
    }
    results::StartTau t;
    t.metric = e.metric;
    t.term = e.term;
    t.relative = e.relative;
    t.tau = std::sqrt(std::max(0.0, e.across.tau2));
    t.df = static_cast<double>(e.estimates.size() - 1);
    t.runs = e.estimates.size();
    t.starts = e.starts;
    t.measured = now;
    t.host_class = key.host_class;
    t.server = key.server;
    t.model = key.model;
    taus.push_back(std::move(t));
  }
  if (taus.empty()) {
    fmt::print(stderr,
               "start-to-start: nothing stored in {}: no effect was given by 3 runs or more\n",
               history);
    return;
  }
  const auto db = history::History::open(history, history::Access::write);
  db->add_start_taus(taus, r.scenario);
  fmt::print(stderr, "start-to-start: stored {} component(s) in {} for {}\n", taus.size(), history,
             where_of(key));
}

}  // namespace kvbench::cli
