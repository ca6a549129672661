// A team's history in a real PostgreSQL database (Debian's server, started for each test as an
// unprivileged user on a private port and folder): two hosts' runs ingested into one database,
// the history gate reading from it within the run's host class, export and import between the
// stores, and the database killed in the middle of an import.

#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "harness/history/store.h"
#include "harness/process/child.h"
#include "tests/integration/harness.h"
#include "tests/support/postgres_server.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A copy of `source` as another session: its run id, start time and host `cpu` (empty: the
// same), every TTFT scaled by `ttft` and decode rate by `decode`.
fs::path copy_run(const fs::path& source, const fs::path& dest, const std::string& run_id,
                  const std::string& started, const std::string& cpu, double ttft, double decode) {
  fs::create_directories(dest);
  json run = read_json(source / "run.json");
  run["run_id"] = run_id;
  run["started"] = started;
  if (!cpu.empty()) {
    run["machine"]["cpu_model"] = cpu;
    run["machine"]["logical_cores"] = 64;
    run["machine"]["hostname"] = "gpu-box";
  }
  std::ofstream(dest / "run.json") << run.dump(2);
  std::ifstream in(source / "calls.jsonl");
  std::ofstream out(dest / "calls.jsonl");
  for (std::string line; std::getline(in, line);) {
    json c = json::parse(line);
    c["run_id"] = run_id;
    auto& client = c["client"];
    if (client.contains("ttft_ms")) {
      client["ttft_ms"] = client["ttft_ms"].get<double>() * ttft;
    }
    if (client.contains("decode_tps")) {
      client["decode_tps"] = client["decode_tps"].get<double>() * decode;
    }
    out << c.dump() << '\n';
  }
  return dest;
}

class HistoryPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::PostgresServer::bin_dir()) {
      if (std::getenv("CI") != nullptr) {
        FAIL() << "Debian's postgresql package is not installed (scripts/setup-deps.sh --for test)";
      }
      GTEST_SKIP() << "Debian's postgresql package is not installed (the test set installs it)";
    }
    server_ = std::make_unique<test::PostgresServer>();
  }
  std::unique_ptr<test::PostgresServer> server_;
};

TEST_F(HistoryPostgres, TwoHostsRunsLandInOneDatabaseAndTheGateReadsItsOwnHostClass) {
  const auto dir = fresh_dir("history-postgres");
  const std::string url = server_->url();
  // A live quick-start run on this machine.
  const auto live = run_kvbench({"run", "quickstart", "--results", (dir / "live").string(), "-q"});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  const auto live_dir = only_run_dir(dir / "live");
  // Twelve earlier sessions of this host and three of another, as their run folders would be.
  std::vector<std::string> args{"ingest"};
  for (int i = 0; i < 12; ++i) {
    const double f = 1.0 + 0.01 * std::sin(1.7 * i);
    const double g = 1.0 + 0.01 * std::cos(2.3 * i);
    args.push_back(copy_run(live_dir, dir / fmt::format("a{}", i), fmt::format("host-a-{}", i),
                            fmt::format("2026-11-{:02}T08:00:00Z", i + 1), "", f, g)
                       .string());
  }
  for (int i = 0; i < 3; ++i) {
    args.push_back(copy_run(live_dir, dir / fmt::format("b{}", i), fmt::format("host-b-{}", i),
                            fmt::format("2026-11-{:02}T09:00:00Z", i + 1), "Ampere Altra Q80-30",
                            0.2, 5.0)
                       .string());
  }
  // And the recorded runs of other scenarios.
  for (const char* name : {"ctx-sweep-small", "prefix-reuse-tiny", "conversation-tiny"}) {
    args.push_back(std::string(KVBENCH_SOURCE_DIR) + "/tests/data/runs/" + name);
  }
  args.insert(args.end(), {"--history", url, "--label", "seed"});
  const auto ingest = run_kvbench(args);
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err << ingest.out;
  EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM sessions"), "18\n");
  EXPECT_EQ(ingest.out.find("kvbench@"), std::string::npos) << ingest.out;  // no user shown
  // The same run again is the same session.
  const auto again = run_kvbench({"ingest", (dir / "a0").string(), "--history", url});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already session 1"), std::string::npos) << again.out;
  EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM sessions"), "18\n");
  // TTFT by host and prompt length, in SQL.
  const auto by_host = server_->psql(
      "SELECT s.cpu_model, COUNT(DISTINCT s.id), COUNT(*) FROM calls c JOIN sessions s ON s.id = "
      "c.session_id WHERE s.run_id LIKE 'host-%' AND c.kind = 'timed' GROUP BY s.cpu_model ORDER "
      "BY s.cpu_model");
  EXPECT_NE(by_host.find("Ampere Altra Q80-30|3|"), std::string::npos) << by_host;
  const auto machine = read_json(live_dir / "run.json")["machine"];
  const std::string cpu = machine["cpu_model"];
  const std::string cores = fmt::format("{}, {} cores", cpu, machine["logical_cores"].get<int>());
  EXPECT_NE(by_host.find(cpu + "|12|"), std::string::npos) << by_host;
  EXPECT_NE(server_->psql("SELECT COUNT(*) FROM calls WHERE ttft_ms IS NOT NULL"), "0\n");
  // The README's query: median TTFT by host class, server version and prompt length.
  const auto medians = server_->psql(
      "SELECT s.host_class, s.server_version, c.prompt_tokens, COUNT(*) AS calls, "
      "percentile_cont(0.5) WITHIN GROUP (ORDER BY c.ttft_ms) AS median_ttft_ms FROM calls c "
      "JOIN sessions s ON s.id = c.session_id WHERE c.kind = 'timed' AND c.outcome = 'ok' GROUP "
      "BY 1, 2, 3 ORDER BY 1, 2, 3");
  EXPECT_NE(medians.find("Ampere Altra Q80-30, 64 cores"), std::string::npos) << medians;
  EXPECT_NE(medians.find(cores), std::string::npos) << medians;

  // The gate reads the history from PostgreSQL, within the live run's own host class.
  const auto gate = run_kvbench({"gate", "--run", live_dir.string(), "--history", url, "--format",
                                 "json", "--on-inconclusive", "warn"});
  ASSERT_EQ(gate.exit_code, 0) << gate.err << gate.out;
  const auto verdict = json::parse(gate.out);
  const auto& details = verdict["details"];
  EXPECT_EQ(details["other_host_sessions"], 3);
  EXPECT_EQ(details["host_class"].get<std::string>().rfind(cores, 0), 0u) << details["host_class"];
  ASSERT_FALSE(details["entries"].empty());
  for (const auto& e : details["entries"]) {
    EXPECT_EQ(e["history_n"], 12) << e.dump();  // not the other host's three, not itself
    EXPECT_EQ(e["verdict"], "PASS") << e.dump();
  }
  EXPECT_EQ(verdict["overall"], "PASS");
  // --any-host takes the other host's five times faster sessions too: the spread of two machines
  // leaves a limit far looser than this host's own.
  const auto any = run_kvbench({"gate", "--run", live_dir.string(), "--history", url, "--any-host",
                                "--format", "json", "--on-inconclusive", "warn"});
  ASSERT_EQ(any.exit_code, 0) << any.err << any.out;
  const auto any_entries = json::parse(any.out)["details"]["entries"];
  ASSERT_EQ(any_entries.size(), details["entries"].size());
  for (std::size_t i = 0; i < any_entries.size(); ++i) {
    const auto& e = any_entries[i];
    const auto& own = details["entries"][i];
    EXPECT_EQ(e["history_n"], 15) << e.dump();
    const double own_gap = std::abs(own["limit"].get<double>() - own["value"].get<double>());
    const double any_gap = std::abs(e["limit"].get<double>() - e["value"].get<double>());
    EXPECT_GT(any_gap, 5 * own_gap) << e.dump() << own.dump();
  }

  // Read-only listings, and the history moved into a SQLite file and back.
  const auto list = run_kvbench({"history", "list", url, "--format", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out).size(), 18u);
  const auto exported = run_kvbench({"history", "export", url, "-o", (dir / "all.jsonl").string()});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto file = (dir / "copy.sqlite").string();
  const auto imported = run_kvbench({"history", "import", file, (dir / "all.jsonl").string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("imported 18 sessions"), std::string::npos) << imported.out;
  const auto from_file = run_kvbench({"gate", "--run", live_dir.string(), "--history", file,
                                      "--format", "json", "--on-inconclusive", "warn"});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(json::parse(from_file.out)["details"]["entries"], details["entries"]);
  // A second database gets the file's sessions back, idempotently.
  server_->create_database("copy");
  for (int round = 0; round < 2; ++round) {
    const auto back =
        run_kvbench({"history", "import", server_->url("copy"), (dir / "all.jsonl").string()});
    ASSERT_EQ(back.exit_code, 0) << back.err;
  }
  EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM sessions", "copy"), "18\n");
  EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM calls", "copy"),
            server_->psql("SELECT COUNT(*) FROM calls"));
}

TEST_F(HistoryPostgres, KillingTheDatabaseMidImportLosesNothingCommittedAndLeavesNoHalfSession) {
  const auto dir = fresh_dir("history-postgres-kill");
  const std::string url = server_->url();
  const std::string recorded = std::string(KVBENCH_SOURCE_DIR) + "/tests/data/runs/quickstart";
  ASSERT_EQ(run_kvbench({"ingest", recorded, "--history", url}).exit_code, 0);
  const auto one = (dir / "one.jsonl").string();
  ASSERT_EQ(run_kvbench({"history", "export", url, "-o", one}).exit_code, 0);
  // 1,500 sessions of the recorded run under new run ids, to import one transaction each.
  std::string line;
  {
    std::ifstream in(one);
    std::getline(in, line);
  }
  json session = json::parse(line);
  const auto bulk = dir / "bulk.jsonl";
  {
    std::ofstream out(bulk);
    for (int i = 0; i < 1500; ++i) {
      session["session"]["run_id"] = fmt::format("bulk-{}", i);
      out << session.dump() << '\n';
    }
  }
  process::SpawnSpec spec;
  spec.argv = {KVBENCH_BINARY, "history", "import", url, bulk.string()};
  spec.log_path = dir / "import.log";
  auto import = process::ChildProcess::spawn(spec);
  // Once a few sessions are in, every server process quits at once, as in a crash.
  int stored = 0;
  for (int i = 0; i < 2000 && stored < 6 && import.running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    try {
      stored = std::stoi(server_->psql("SELECT COUNT(*) FROM sessions"));
    } catch (const std::exception&) {
    }
  }
  server_->stop("immediate");
  const auto status = import.wait_for(std::chrono::seconds(60));
  ASSERT_TRUE(status.has_value());
  std::stringstream log;
  log << std::ifstream(dir / "import.log").rdbuf();
  EXPECT_EQ(status->kind, process::ExitStatus::Kind::exited) << log.str();  // not a crash
  EXPECT_EQ(status->code, 1) << log.str();
  EXPECT_NE(log.str().find("error: "), std::string::npos) << log.str();

  server_->start();
  const int after = std::stoi(server_->psql("SELECT COUNT(*) FROM sessions"));
  EXPECT_GE(after, stored);  // what was committed is there
  EXPECT_LT(after, 1501);    // and the import was cut short
  // No half session: every session has all its calls and values.
  EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM sessions s WHERE s.calls <> (SELECT COUNT(*) "
                          "FROM calls c WHERE c.session_id = s.id)"),
            "0\n");
  EXPECT_EQ(server_->psql("SELECT COUNT(DISTINCT n) FROM (SELECT COUNT(*) AS n FROM "
                          "session_values GROUP BY session_id) AS per_session"),
            "1\n");
  EXPECT_EQ(server_->psql("SELECT calls FROM sessions WHERE run_id = '7dfd962ac6d2'"), "17\n");
  // The import run again stores the rest, and each session once.
  const auto rest = run_kvbench({"history", "import", url, bulk.string()});
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_NE(rest.out.find(fmt::format("({} already there)", after - 1)), std::string::npos)
      << rest.out;
  EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM sessions"), "1501\n");
  EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM calls"), fmt::format("{}\n", 1501 * 17));
}

// Hosts of a matrix that all start on a new database at once: the first writers create the
// tables one at a time, and every run is stored.
TEST_F(HistoryPostgres, HostsIngestingIntoANewDatabaseAtOnceAllLand) {
  const auto dir = fresh_dir("history-postgres-race");
  const std::string recorded = std::string(KVBENCH_SOURCE_DIR) + "/tests/data/runs/quickstart";
  for (int round = 0; round < 3; ++round) {
    const std::string db = fmt::format("race{}", round);
    server_->create_database(db);
    std::vector<process::ChildProcess> hosts;
    for (int i = 0; i < 4; ++i) {
      const auto run =
          copy_run(recorded, dir / fmt::format("r{}-{}", round, i),
                   fmt::format("race-{}-{}", round, i), "2026-11-01T08:00:00Z", "", 1.0, 1.0);
      process::SpawnSpec spec;
      spec.argv = {KVBENCH_BINARY, "ingest", run.string(), "--history", server_->url(db)};
      spec.log_path = dir / fmt::format("ingest-{}-{}.log", round, i);
      hosts.push_back(process::ChildProcess::spawn(spec));
    }
    for (int i = 0; i < 4; ++i) {
      const auto status = hosts[static_cast<std::size_t>(i)].wait_for(std::chrono::seconds(60));
      std::stringstream log;
      log << std::ifstream(dir / fmt::format("ingest-{}-{}.log", round, i)).rdbuf();
      ASSERT_TRUE(status.has_value());
      EXPECT_TRUE(status->success()) << log.str();
    }
    EXPECT_EQ(server_->psql("SELECT COUNT(*) FROM sessions", db), "4\n");
    EXPECT_EQ(server_->psql("SELECT value FROM meta", db),
              std::to_string(history::kSchemaVersion) + "\n");
  }
}

}  // namespace
}  // namespace kvbench::itest
