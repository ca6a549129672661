// End to end on the real llama-server with synthetic models: the quickstart runs, every timed
// prompt is read cold, a repeated prompt is caught, a bad model file is refused, nothing is left
// running.

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/analysis/conditions.h"
#include "harness/process/child.h"
#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

bool has_flag(const CallRecord& r, const std::string& f) {
  return std::find(r.flags.begin(), r.flags.end(), f) != r.flags.end();
}

void expect_no_server_left(const nlohmann::json& run) {
  for (const auto& b : run["blocks"]) {
    if (b.contains("url")) {
      const std::string url = b["url"];
      const std::string port = url.substr(url.rfind(':') + 1);
      EXPECT_THAT(processes_with("--port " + port), ::testing::IsEmpty())
          << "a llama-server of block " << b["index"] << " is still running";
    }
  }
}

TEST(EndToEnd, QuickstartRunsColdAndTtftGrowsWithPromptLength) {
  const fs::path results = fresh_dir("quickstart");
  const auto r = run_kvbench({"run", std::string(KVBENCH_SOURCE_DIR) + "/scenarios/quickstart.json",
                              "--results", results.string(), "--label", "host=ci-7", "--label",
                              "commit=abc 123"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("| 4096 | f16 | 2048 |"));
  const fs::path run_dir = only_run_dir(results);
  const auto kept = read_json(run_dir / "summary.json");
  // The terminal answers first: what was measured and how far to trust it, then every finding
  // of the report, then the table; the whole report stays in the run folder, with its page.
  std::istringstream out(r.out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(out, line)) {
    lines.push_back(line);
  }
  ASSERT_GE(lines.size(), 5U) << r.out;
  EXPECT_EQ(lines[0], "What kvbench found (quickstart):");
  EXPECT_THAT(lines[1], ::testing::StartsWith("- 24 timed calls to llama-server"));
  EXPECT_THAT(lines[1], HasSubstr("in 4 server starts"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("- How far to trust it: "));
  // Four starts of two rounds: every effect rests on its starts and covers the next one.
  EXPECT_THAT(lines[2], HasSubstr("they cover the next server start on this machine"));
  EXPECT_THAT(lines[3], ::testing::StartsWith("- Time to first token grows by "));
  ASSERT_GE(kept["findings"].size(), 5U);
  for (const auto& f : kept["findings"]) {
    EXPECT_THAT(r.out, HasSubstr("- " + f["text"].get<std::string>() + "\n"));
  }
  std::ifstream md_file(run_dir / "report.md");
  const std::string md((std::istreambuf_iterator<char>(md_file)), std::istreambuf_iterator<char>());
  EXPECT_THAT(md, ::testing::StartsWith("# kvbench run: quickstart\n\n## What was found\n\n- 24 "));
  EXPECT_THAT(md, HasSubstr("- labels: commit=abc 123, host=ci-7"));
  EXPECT_THAT(md, HasSubstr("### Descriptive statistics"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("### Descriptive statistics")));
  EXPECT_THAT(r.err, HasSubstr("report: " + (run_dir / "report.md").string()));
  EXPECT_THAT(r.err, HasSubstr("page:   " + (run_dir / "report.html").string()));
  std::ifstream page_file(run_dir / "report.html");
  const std::string page((std::istreambuf_iterator<char>(page_file)),
                         std::istreambuf_iterator<char>());
  EXPECT_THAT(page, HasSubstr("<h2>What was found</h2>"));
  EXPECT_THAT(page, HasSubstr("<canvas id=\"plot-ttft\""));
  EXPECT_EQ(kept["run"]["labels"]["host"], "ci-7");
  EXPECT_FALSE(kept["conditions"].empty());
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["labels"]["commit"], "abc 123");
  EXPECT_EQ(run["status"], "complete");
  EXPECT_EQ(run["scenario"]["name"], "quickstart");
  EXPECT_THAT(run["server"]["version"].get<std::string>(), HasSubstr("version:"));
  EXPECT_EQ(run["model"]["shape"]["n_layer"], 4);
  EXPECT_TRUE(fs::exists(run_dir / "server-block0.log"));
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 40U);  // per start: 1 warm-up, 6 timed, 3 probes
  std::map<int, std::vector<double>> ttft;
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
    EXPECT_EQ(c.prompt_tokens_counted, c.prompt_tokens) << "built to the exact token count";
    EXPECT_FALSE(c.nonce.empty());
    ASSERT_TRUE(c.server.cache_n && c.server.prompt_n) << c.seq;
    // Every timed prompt is read in full: the server reuses only the tokens its start shares
    // with the previous prompt (the BOS token), never any of the unique first line.
    EXPECT_EQ(c.server.cache_n, c.expected_cache_n) << c.seq;
    EXPECT_LE(*c.server.cache_n, 1) << c.seq;
    EXPECT_EQ(*c.server.prompt_n + *c.server.cache_n, c.prompt_tokens) << c.seq;
    EXPECT_TRUE(c.flags.empty()) << c.seq;
    EXPECT_EQ(c.client.tokens, 128);
    EXPECT_EQ(c.client.token_ms.size(), 128U) << "one event per token from a synthetic model";
    if (c.kind == kvbench::CallKind::timed) {
      ttft[c.prompt_tokens].push_back(*c.client.ttft_ms);
    }
  }
  const auto median = [](std::vector<double> v) {
    return analysis::quartiles(std::move(v)).median;
  };
  EXPECT_LT(median(ttft[256]), median(ttft[1024]));
  EXPECT_LT(median(ttft[1024]), median(ttft[2048]));
  expect_no_server_left(run);

  // The report works offline from the files and its JSON carries the same conditions.
  const auto rep =
      run_kvbench({"report", run_dir.string(), "--json", (results / "summary.json").string(),
                   "--calls-csv", (results / "calls.csv").string()});
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const auto summary = read_json(results / "summary.json");
  EXPECT_EQ(summary["conditions"], kept["conditions"]) << "the run's own summary.json is the same";
  ASSERT_EQ(summary["conditions"].size(), 3U);
  EXPECT_EQ(summary["conditions"][2]["prompt_tokens"], 2048);
  EXPECT_EQ(summary["prompt_cache"]["matched_expected"], 24);
  EXPECT_EQ(summary["prompt_cache"]["predicted"], 24);
  EXPECT_EQ(summary["run"]["run_id"], run["run_id"]);
  // The third proof: llama-server's count of processed prompt tokens over the block equals the
  // sum of the calls' prompt_n (the warm-up and the probes included).
  ASSERT_EQ(summary["server_counters"].size(), 4U) << "one per server start";
  for (const auto& counter : summary["server_counters"]) {
    EXPECT_EQ(counter["metric"], "llamacpp:prompt_tokens_total");
    EXPECT_EQ(counter["agree"], true) << summary["server_counters"].dump();
    EXPECT_GT(counter["calls"].get<long long>(), 6 * 256);
  }

  // Effects with CIs and the fitted drift, for every metric; the probes' own drift beside it.
  EXPECT_THAT(rep.out, HasSubstr("## Effects"));
  EXPECT_THAT(rep.out, HasSubstr("ms per 1,000 prompt tokens"));
  EXPECT_THAT(rep.out, HasSubstr("per minute"));
  const auto& analysis = summary["analysis"];
  EXPECT_EQ(analysis["timed_ok"], 24);
  for (const auto& e : analysis["effects"]) {
    EXPECT_EQ(e["covers"], "machine") << e.dump();
    EXPECT_EQ(e["starts"], 4.0) << e.dump();
  }
  ASSERT_EQ(analysis["models"].size(), 4U);
  for (const auto& m : analysis["models"]) {
    const auto& coefs = m["fit"]["linear"]["coefficients"];
    ASSERT_EQ(coefs.size(), 3U) << m["metric"];  // intercept, prompt_ktokens, t_min
    EXPECT_EQ(coefs[2]["name"], "t_min");
    EXPECT_LT(coefs[1]["ci"]["lower"].get<double>(), coefs[1]["ci"]["upper"].get<double>());
  }
  // TTFT rises with prompt length: the whole CI of the slope lies above zero.
  EXPECT_GT(analysis["models"][0]["fit"]["linear"]["coefficients"][1]["ci"]["lower"].get<double>(),
            0.0);
  ASSERT_EQ(analysis["probes"].size(), 4U);
  EXPECT_EQ(analysis["probes"][0]["values"].size(), 12U);  // three in each of four starts
  // The same files give the same numbers: the report is a pure function of the run folder.
  const auto again =
      run_kvbench({"report", run_dir.string(), "--json", (results / "summary2.json").string()});
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_EQ(read_json(results / "summary2.json")["analysis"], analysis);
}

// kvbench compare on the recorded runs: a run against itself has ratio 1 everywhere and differs in
// nothing; two runs with no condition in common say so and exit 1; a missing folder is bad input.
TEST(EndToEnd, CompareSetsTwoRunFoldersSideBySide) {
  const std::string runs = std::string(KVBENCH_SOURCE_DIR) + "/tests/data/runs/";
  const fs::path dir = fresh_dir("compare");
  const auto same = run_kvbench(
      {"compare", runs + "quickstart", runs + "quickstart", "--json", (dir / "c.json").string()});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_THAT(same.out, HasSubstr("## kvbench compare (descriptive, not a test)"));
  EXPECT_THAT(same.out, HasSubstr("the same kvbench, server, model, machine, scenario"));
  const auto j = read_json(dir / "c.json");
  ASSERT_FALSE(j["rows"].empty());
  for (const auto& row : j["rows"]) {
    EXPECT_DOUBLE_EQ(row["ratio"].get<double>(), 1.0) << row.dump();
  }
  const auto apart = run_kvbench({"compare", runs + "quickstart", runs + "prefix-reuse-tiny"});
  EXPECT_THAT(apart.out, HasSubstr("differs: "));
  if (apart.out.find("No condition was measured by both runs") != std::string::npos) {
    EXPECT_EQ(apart.exit_code, 1);
  }
  // `kvbench report --json -`: the JSON alone on stdout; two outputs on stdout are refused.
  const auto json_out = run_kvbench({"report", runs + "quickstart", "--json", "-"});
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  EXPECT_EQ(nlohmann::json::parse(json_out.out)["run"]["run_id"], j["a"]["run_id"]);
  const auto two = run_kvbench({"report", runs + "quickstart", "--json", "-", "--csv", "-"});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_THAT(two.err, HasSubstr("stdout (-) can carry one output only"));
  const auto missing = run_kvbench({"compare", runs + "quickstart", (dir / "nothing").string()});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("not a kvbench run folder"));
}

// --help names the program, not the path it was started by, types its paths, groups the server
// options, and ends with examples, the exit codes and the environment.
TEST(EndToEnd, HelpNamesTheProgramTypesPathsAndListsExitCodes) {
  const auto r = run_kvbench({"run", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Usage: kvbench run [OPTIONS] [scenario]"));
  EXPECT_THAT(r.out, HasSubstr("scenario FILE"));
  EXPECT_THAT(r.out, HasSubstr("--resume RUN_DIR"));
  EXPECT_THAT(r.out, HasSubstr("Server and results:"));
  // CLI11 2.3 (Debian 12) writes a default as DIR=results, 2.4 (Debian 13) as DIR [results].
  EXPECT_THAT(r.out, ::testing::AnyOf(HasSubstr("--results DIR=results"),
                                      HasSubstr("--results DIR [results]")));
  EXPECT_THAT(r.out, HasSubstr("Exit codes: 0 done;"));
  EXPECT_THAT(r.out, HasSubstr("KVBENCH_LLAMA_SERVER"));
  EXPECT_EQ(r.out.find(KVBENCH_BINARY), std::string::npos) << "the full path is not shown";
}

TEST(EndToEnd, RepeatedPromptWithoutNonceIsCaughtReadingFromCache) {
  const fs::path results = fresh_dir("trap");
  const std::string scenario = write_file(results, "trap.json", R"({
    "name": "trap", "server": {"model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [200], "num_ctx": [1024]},
    "repeats": 3, "warmup": 0, "max_tokens": 4, "unique_first_line": false })");
  const auto r = run_kvbench({"run", scenario, "--results", (results / "runs").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto calls = read_calls(only_run_dir(results / "runs"));
  ASSERT_EQ(calls.size(), 3U);
  // A fresh server holds only the one-token request kvbench sends after load: at most its BOS.
  EXPECT_EQ(calls[0].server.cache_n, calls[0].expected_cache_n);
  EXPECT_LE(calls[0].server.cache_n, 1);
  EXPECT_FALSE(has_flag(calls[0], "prompt_cache_hit"));
  for (std::size_t i = 1; i < calls.size(); ++i) {
    // The same prompt again: all but the one token the server always re-reads come from cache.
    EXPECT_EQ(calls[i].server.cache_n, 199) << i;
    EXPECT_EQ(calls[i].server.prompt_n, 1) << i;
    EXPECT_EQ(calls[i].expected_cache_n, 199) << i;
    EXPECT_TRUE(has_flag(calls[i], "prompt_cache_hit")) << i;
  }
  EXPECT_THAT(r.out, HasSubstr("2 read past their unique first line from the cache"));
}

TEST(EndToEnd, ModelThatIsNotGgufIsAClearErrorAndNothingIsWritten) {
  const fs::path dir = fresh_dir("badmodel");
  const std::string model = write_file(dir, "model.gguf", "this is not a model\n");
  const std::string scenario = write_file(dir, "s.json", R"({
    "name": "bad", "server": {"model": ")" + model + R"("},
    "factors": {"prompt_tokens": [16]} })");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(model));
  EXPECT_THAT(r.err, HasSubstr("GGUF"));
  EXPECT_FALSE(fs::exists(dir / "runs")) << "no results folder for a run that never started";
}

TEST(EndToEnd, BadScenarioExitsTwoBeforeAnythingRuns) {
  const fs::path dir = fresh_dir("badscenario");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "x",
    "factors": {"prompt_tokens": [256, 1024, 8192], "num_ctx": [8192]}, "max_tokens": 32})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("factors.prompt_tokens[2]: 8192 tokens do not fit num_ctx 8192 "
                               "with max_tokens 32"));
  EXPECT_FALSE(fs::exists(dir / "runs"));
}

// `kvbench run` follows the one output scheme: -o files in their extensions' formats beside the
// report on stdout (-o -), and a format it cannot write is refused before any server starts.
TEST(EndToEnd, RunWritesItsReportInTheFormatsAskedAndRefusesOthersFirst) {
  const fs::path dir = fresh_dir("run-formats");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "fmt",
    "server": {"model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [64, 128], "num_ctx": [1024]}, "repeats": 2, "max_tokens": 4})");
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--format", "xml"}, {"-o", (dir / "report.txt").string()}}) {
    std::vector<std::string> args{"run", scenario, "--results", (dir / "runs").string(), "-q"};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = run_kvbench(args);
    EXPECT_EQ(r.exit_code, 2) << bad[0];
    EXPECT_FALSE(fs::exists(dir / "runs")) << "refused before anything started: " << bad[0];
  }
  const auto r =
      run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q", "-o", "-", "-o",
                   (dir / "s.json.out.json").string(), "-o", (dir / "c.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("# kvbench run: fmt"));
  const auto summary = read_json(dir / "s.json.out.json");
  EXPECT_EQ(summary["schema"], "kvbench.report");
  EXPECT_EQ(summary["conditions"].size(), 2U);
  std::ifstream csv(dir / "c.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_THAT(header, ::testing::StartsWith("num_ctx,cache_type,prompt_tokens,n,failed"));
}

TEST(EndToEnd, AttachedModeMeasuresARunningServer) {
  const fs::path dir = fresh_dir("attached");
  // Start a managed run's model once, then serve it by hand and attach to it.
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const int port = 18000 + static_cast<int>(::getpid() % 2000);
  auto server = serve_by_hand(dir / "tiny.gguf", port, dir / "server.log");
  const std::string scenario = write_file(dir, "s.json",
                                          R"({"name": "att",
    "server": {"url": "http://127.0.0.1:)" + std::to_string(port) +
                                              R"("},
    "factors": {"prompt_tokens": [100, 300], "num_ctx": 1024}, "repeats": 2, "max_tokens": 4})");
  const KvbenchResult r = run_when_ready(scenario, dir / "runs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run_dir = only_run_dir(dir / "runs");
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["server"]["mode"], "attached");
  EXPECT_EQ(run["blocks"][0]["props"]["total_slots"], 1);
  const auto calls = read_calls(run_dir);
  ASSERT_EQ(calls.size(), 5U);
  for (const auto& c : calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok);
    EXPECT_TRUE(c.flags.empty());
  }
  EXPECT_TRUE(server.running()) << "kvbench never stops a server it did not start";
  server.stop(std::chrono::milliseconds(3000));
}

}  // namespace
}  // namespace kvbench::itest
