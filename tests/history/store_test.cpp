// The history store, the same tests on both stores: SQLite always (test_history), PostgreSQL
// where test_history_postgres starts a private server (postgres_store_test.cpp).

#include "harness/history/store.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/history/archive.h"
#include "harness/session/host.h"
#include "tests/history/store_fixture.h"

namespace kvbench::history {
namespace {

const std::string kRuns = std::string(KVBENCH_TEST_DATA) + "/runs/";

// A recorded run's session, as host `cpu` with `cores` cores, under another run id.
Session recorded(const std::string& run_id, const std::string& cpu = "", int cores = 0,
                 double scale = 1.0) {
  auto run = session::load_run_inputs(kRuns + "quickstart");
  run.session.run_id = run_id;
  if (!cpu.empty()) {
    run.session.host.cpu_model = cpu;
    run.session.host.logical_cores = cores;
    run.session.host_class = session::host_class(run.session.host);
  }
  for (auto& c : run.loaded.calls) {
    c.run_id = run_id;
    if (c.client.ttft_ms) {
      *c.client.ttft_ms *= scale;
    }
  }
  run.session.calls_digest = session::calls_digest(run.loaded.calls);
  const auto values =
      session::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
  return session_of(run, "label-" + run_id, values);
}

Session bare(const std::string& run_id, const std::string& hash, const std::string& host_class,
             double value, const std::string& recorded_at = "2026-01-01T00:00:00Z") {
  Session s;
  s.info.run_id = run_id;
  s.info.recorded_at = recorded_at;
  s.info.scenario_name = "gate-demo";
  s.info.scenario_hash = hash;
  s.info.host_class = host_class;
  s.info.calls_digest = "fnv1a64:" + run_id;
  s.values.push_back({"decode_tps", "all calls", "", value, 1024, 4096, 30});
  return s;
}

TEST_P(HistoryStore, ASessionRoundTripsWithItsHostValuesAndCalls) {
  const Session in = recorded("r1");
  ASSERT_FALSE(in.values.empty());
  ASSERT_EQ(in.calls.size(), 17u);
  Session with_nan = in;
  with_nan.values.push_back({"ttft_ms", "all calls", "", std::nan(""), 0, 0, 0});
  const auto added = open_write()->add(with_nan);
  EXPECT_TRUE(added.added);
  const auto db = open_read();
  EXPECT_EQ(db->sessions(), 1u);
  const Session out = db->session(added.id);
  EXPECT_EQ(out.info.run_id, "r1");
  EXPECT_EQ(out.info.label, "label-r1");
  EXPECT_EQ(out.info.host, in.info.host);
  EXPECT_EQ(out.info.host.cpu_model, "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(out.info.host_class, "Intel(R) Xeon(R) Processor, 2 cores, 24 GiB, no GPU, x86_64");
  EXPECT_EQ(out.info.calls, 17);
  ASSERT_EQ(out.values.size(), in.values.size());  // the NaN value is not stored
  for (std::size_t i = 0; i < in.values.size(); ++i) {
    EXPECT_EQ(out.values[i].metric, in.values[i].metric);
    EXPECT_DOUBLE_EQ(out.values[i].value, in.values[i].value);
    EXPECT_EQ(out.values[i].ref_prompt_tokens, in.values[i].ref_prompt_tokens);
  }
  ASSERT_EQ(out.calls.size(), in.calls.size());
  EXPECT_EQ(session::calls_digest(out.calls), in.info.calls_digest);
  EXPECT_EQ(db->rows().size(), in.values.size());
  const auto listed = db->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, added.id);
  EXPECT_EQ(listed[0].info.host_class, out.info.host_class);
  EXPECT_TRUE(listed[0].calls.empty());
}

TEST_P(HistoryStore, TheCallsTableAnswersQueriesInSql) {
  open_write()->add(recorded("r1"));
  const auto db = open_read();
  const auto rows = db->sql().query(
      "SELECT s.host_class, s.server_version, c.prompt_tokens, COUNT(*), AVG(c.ttft_ms) FROM "
      "calls c JOIN sessions s ON s.id = c.session_id WHERE c.kind = 'timed' AND c.outcome = 'ok' "
      "GROUP BY s.host_class, s.server_version, c.prompt_tokens ORDER BY c.prompt_tokens");
  ASSERT_GE(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(as_text(r[0]), "Intel(R) Xeon(R) Processor, 2 cores, 24 GiB, no GPU, x86_64");
    EXPECT_EQ(as_text(r[1]), "version: 0.7.0 (build 11669, commit Debian)");
    EXPECT_GT(as_int(r[3]), 0);
    EXPECT_GT(as_real(r[4]), 0.0);
  }
  EXPECT_LT(as_int(rows.front()[2]), as_int(rows.back()[2]));
}

// A workload's columns are in its own table, a row per call that carries its part, joined to its
// call by session and seq; a prompt sweep's calls leave no row there.
TEST_P(HistoryStore, AWorkloadsColumnsAreInItsOwnTable) {
  auto run = session::load_run_inputs(kRuns + "conversation-tiny");
  const auto values =
      session::session_values(run.loaded.calls, run.scenario.gate, run.scenario.seed);
  open_write()->add(session_of(run, "turns", values));
  open_write()->add(recorded("r1"));
  int turns = 0;
  for (const auto& c : run.loaded.calls) {
    turns += c.part.key() == "conversation" ? 1 : 0;
  }
  const auto db = open_read();
  const auto rows = db->sql().query(
      "SELECT COUNT(*), COUNT(DISTINCT t.session_id), SUM(t.turn), MIN(c.kind) FROM "
      "calls_conversation t JOIN calls c ON c.session_id = t.session_id AND c.seq = t.seq");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(as_int(rows[0][0]), turns);
  EXPECT_EQ(as_int(rows[0][1]), 1) << "the sweep's session has no turn";
  EXPECT_GT(as_int(rows[0][2]), turns) << "turns after the first";
  EXPECT_EQ(as_text(rows[0][3]), "timed");
  EXPECT_GT(turns, 0);
}

TEST_P(HistoryStore, RecentKeepsTheLastSessionsOfOneScenarioAndHostClass) {
  const auto db = open_write();
  for (int i = 0; i < 5; ++i) {
    db->add(bare(fmt::format("a{}", i), "h1", "A", 10.0 + i,
                 fmt::format("2026-01-0{}T00:00:00Z", 5 - i % 2 * 4 + i)));
  }
  db->add(bare("b0", "h1", "B", 50.0));
  db->add(bare("other", "h2", "A", 99.0));
  RecentQuery q{"h1", "A", "decode_tps", "all calls", "", 64, ""};
  // By recording time, not by when they were stored: a1 (Jan 2) and a3 (Jan 4) came first.
  EXPECT_EQ(db->recent(q), (std::vector<double>{11, 13, 10, 12, 14}));
  q.limit = 3;
  EXPECT_EQ(db->recent(q), (std::vector<double>{10, 12, 14}));
  q.limit = 64;
  q.exclude_run_id = "a4";
  EXPECT_EQ(db->recent(q).size(), 4u);
  q.host_class = "";
  EXPECT_EQ(db->recent(q).size(), 5u);  // every host class: b0 too
  q.metric = "ttft_ms";
  EXPECT_TRUE(db->recent(q).empty());
  EXPECT_EQ(db->host_classes("h1"),
            (std::vector<std::pair<std::string, std::size_t>>{{"A", 5}, {"B", 1}}));
}

TEST_P(HistoryStore, TheSameRunTwiceIsOneSessionAndAChangedOneIsRefused) {
  const auto db = open_write();
  const auto first = db->add(recorded("r1"));
  const auto again = db->add(recorded("r1"));
  EXPECT_TRUE(first.added);
  EXPECT_FALSE(again.added);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(db->sessions(), 1u);
  EXPECT_THROW(db->add(recorded("r1", "", 0, 1.5)), InputError);  // other calls, same run id
  EXPECT_EQ(db->sessions(), 1u);
  EXPECT_EQ(db->session(first.id).calls.size(), 17u);
}

// Start-to-start components: stored under a machine class, server build and model; read back the
// newest of each effect (metric, term, form) for one of them, nothing for another.
TEST_P(HistoryStore, StartComponentsReadBackTheNewestOfEachEffect) {
  const auto tau = [](const std::string& term, bool relative, double value, const char* when) {
    results::StartTau t;
    t.metric = "decode_tps";
    t.term = term;
    t.relative = relative;
    t.tau = value;
    t.df = 9;
    t.runs = 10;
    t.starts = 1;
    t.measured = when;
    t.host_class = "AMD EPYC, 2 cores, 24 GiB, no GPU, x86_64";
    t.server = "version: 0.7.0 (build 11669, commit Debian)";
    t.model = "synthetic:small";
    return t;
  };
  {
    const auto db = open_write();
    db->add_start_taus({tau("prompt_ktokens", true, 3.2, "2026-12-05T10:00:00Z"),
                        tau("prompt_ktokens", false, 40, "2026-12-05T10:00:00Z")},
                       "quickstart");
    db->add_start_taus({tau("prompt_ktokens", true, 2.9, "2026-12-05T11:00:00Z")}, "quickstart");
  }
  const auto db = open_read();
  const auto found =
      db->start_taus("AMD EPYC, 2 cores, 24 GiB, no GPU, x86_64",
                     "version: 0.7.0 (build 11669, commit Debian)", "synthetic:small");
  ASSERT_EQ(found.size(), 2U);
  EXPECT_TRUE(found[0].relative);
  EXPECT_DOUBLE_EQ(found[0].tau, 2.9) << "the newest";
  EXPECT_EQ(found[0].measured, "2026-12-05T11:00:00Z");
  EXPECT_DOUBLE_EQ(found[0].df, 9);
  EXPECT_EQ(found[0].runs, 10U);
  EXPECT_FALSE(found[1].relative);
  EXPECT_DOUBLE_EQ(found[1].tau, 40);
  EXPECT_TRUE(db->start_taus("AMD EPYC, 2 cores, 24 GiB, no GPU, x86_64",
                             "version: 0.7.0 (build 11669, commit Debian)", "synthetic:tiny")
                  .empty());
}

TEST_P(HistoryStore, AReadOnlyHistoryWritesNothing) {
  open_write()->add(bare("a0", "h1", "A", 1.0));
  const auto db = open_read();
  EXPECT_TRUE(db->sql().read_only());
  EXPECT_THROW(db->add(bare("a1", "h1", "A", 2.0)), Error);
  EXPECT_EQ(open_read()->sessions(), 1u);
}

TEST_P(HistoryStore, ANewerSchemaIsRefused) {
  open_write()->sql().query("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  try {
    open_read();
    FAIL() << "a history of schema version 99 was opened";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format(
                  "schema version 99, newer than this kvbench knows ({})", kSchemaVersion)),
              std::string::npos)
        << e.what();
  }
}

TEST_P(HistoryStore, AnExportReadsBackIntoAnotherStoreUnchanged) {
  const auto db = open_write();
  db->add(recorded("r1"));
  db->add(recorded("r2", "AMD EPYC 7B13", 64));
  std::stringstream lines;
  for (const auto id : db->session_ids()) {
    lines << to_export_line(db->session(id)).dump() << '\n';
  }
  const auto sessions = read_export(lines, "export.jsonl");
  ASSERT_EQ(sessions.size(), 2u);
  const auto copy_path = std::filesystem::temp_directory_path() / "kvbench-export-copy.sqlite";
  std::filesystem::remove(copy_path);
  {
    const auto copy = History::open(copy_path.string(), Access::write);
    for (const auto& s : sessions) {
      EXPECT_TRUE(copy->add(s).added);
    }
    for (const auto& s : sessions) {
      EXPECT_FALSE(copy->add(s).added);  // importing again writes nothing
    }
    const auto back = copy->session(copy->session_ids().back());
    EXPECT_EQ(back.info.host.cpu_model, "AMD EPYC 7B13");
    EXPECT_EQ(back.info.host_class, "AMD EPYC 7B13, 64 cores, 24 GiB, no GPU, x86_64");
    EXPECT_EQ(back.info.calls_digest, sessions.back().info.calls_digest);
    EXPECT_EQ(copy->rows().size(), db->rows().size());
  }
  std::filesystem::remove(copy_path);
}

TEST(HistoryArchive, AChangedOrForeignLineIsRefusedNamingItsPlace) {
  const auto line = to_export_line(recorded("r1"));
  auto changed = line;
  changed["calls"][3]["client"]["ttft_ms"] = 1.0;
  try {
    from_export_line(changed, "x.jsonl:4");
    FAIL() << "a changed call was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.jsonl:4: calls: they do not match"), std::string::npos)
        << e.what();
  }
  auto foreign = line;
  foreign["schema"] = "kvbench.report";
  EXPECT_THROW(from_export_line(foreign, "x"), InputError);
  auto newer = line;
  newer["schema_version"] = 2;
  EXPECT_THROW(from_export_line(newer, "x"), InputError);
  std::istringstream text("{\"schema\": \"kvbench.history-session\"\n");
  EXPECT_THROW(read_export(text, "cut.jsonl"), InputError);
}

TEST(HistoryArchive, IngestChecksStatusHashAndHost) {
  auto run = session::load_run_inputs(kRuns + "quickstart");
  EXPECT_NO_THROW(check_ingestible(run));
  auto changed = run;
  changed.loaded.run.scenario["seed"] = 12345;
  EXPECT_THROW(check_ingestible(changed), InputError);
  auto unfinished = run;
  unfinished.loaded.run.status = "running";
  EXPECT_THROW(check_ingestible(unfinished), InputError);
  auto hostless = run;
  hostless.session.host = {};
  EXPECT_THROW(check_ingestible(hostless), InputError);
  for (const char* name : {"ctx-sweep-small", "prefix-reuse-tiny", "conversation-tiny"}) {
    EXPECT_NO_THROW(check_ingestible(session::load_run_inputs(kRuns + name))) << name;
  }
}

}  // namespace
}  // namespace kvbench::history
