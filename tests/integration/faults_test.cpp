// Faults on the real llama-server: an interrupted run keeps what it measured and resumes to a
// complete calls.jsonl; a managed server killed mid-block is restarted; server arguments with
// shell metacharacters reach the server verbatim.

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/process/child.h"
#include "harness/process/run_capture.h"
#include "harness/results/results.h"
#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::size_t lines_in(const fs::path& p) {
  std::ifstream in(p);
  std::size_t n = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++n;
  }
  return n;
}

// Starts kvbench in the background (the test's own child, so it can be signalled).
process::ChildProcess start_kvbench(const std::vector<std::string>& args, const fs::path& log) {
  process::SpawnSpec spec;
  spec.argv = {KVBENCH_BINARY};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_set = {{"KVBENCH_MODELS_DIR", std::string(KVBENCH_BUILD_DIR) + "/models"},
                  {"KVBENCH_LLAMA_SERVER", llama_server_path()}};
  spec.log_path = log;
  return process::ChildProcess::spawn(spec);
}

bool wait_until(const std::function<bool()>& done, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (done()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return done();
}

// The run folder under `runs` once its calls.jsonl holds `n` records; empty after 300 s.
fs::path wait_for_records(const fs::path& runs, std::size_t n) {
  fs::path run_dir;
  const bool ok = wait_until(
      [&] {
        if (!fs::exists(runs)) {
          return false;
        }
        for (const auto& e : fs::directory_iterator(runs)) {
          run_dir = e.path();
        }
        return !run_dir.empty() && lines_in(run_dir / "calls.jsonl") >= n;
      },
      300);
  return ok ? run_dir : fs::path();
}

void expect_each_planned_call_once(const fs::path& run_dir) {
  const auto run = read_json(run_dir / "run.json");
  std::size_t planned = 0;
  for (const auto& b : run["plan"]["blocks"]) {
    planned += b["calls"].size();
  }
  std::multiset<int> seqs;
  for (const auto& c : results::load_run(run_dir).calls) {  // a repeat replaces its aborted call
    seqs.insert(c.seq);
  }
  EXPECT_EQ(seqs.size(), planned);
  EXPECT_EQ(std::set<int>(seqs.begin(), seqs.end()).size(), planned) << "a call recorded twice";
}

const char* kLongRun = R"({"name": "long", "server": {"model": "synthetic:tiny"},
  "factors": {"prompt_tokens": [300, 600, 900], "num_ctx": [2048]},
  "repeats": 8, "warmup": 1, "max_tokens": 16})";

TEST(Faults, SigintKeepsWhatWasMeasuredAndResumeCompletesThePlan) {
  const fs::path dir = fresh_dir("sigint");
  const std::string scenario = write_file(dir, "long.json", kLongRun);
  auto kv = start_kvbench({"run", scenario, "--results", (dir / "runs").string()}, dir / "log");
  const fs::path run_dir = wait_for_records(dir / "runs", 4);
  ASSERT_FALSE(run_dir.empty()) << "no records appeared";
  ASSERT_EQ(::kill(kv.pid(), SIGINT), 0);
  const auto status = kv.wait_for(milliseconds(30000));
  ASSERT_TRUE(status) << "kvbench did not stop after SIGINT";
  EXPECT_EQ(status->code, 130);
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["status"], "incomplete");
  const std::size_t recorded = lines_in(run_dir / "calls.jsonl");
  EXPECT_GE(recorded, 4U);
  EXPECT_LT(recorded, 25U);
  for (const auto& b : run["blocks"]) {
    const std::string url = b["url"];
    EXPECT_THAT(processes_with("--port " + url.substr(url.rfind(':') + 1)), ::testing::IsEmpty());
  }
  // A record cut short by a crash: resume cuts it off and runs that call again.
  { std::ofstream(run_dir / "calls.jsonl", std::ios::app) << R"({"seq": 99, "kind": "ti)"; }
  const auto report = run_kvbench({"report", run_dir.string()});
  EXPECT_EQ(report.exit_code, 0) << "a truncated last line never breaks report";
  EXPECT_THAT(report.err, ::testing::HasSubstr("incomplete or malformed record skipped"));

  const auto resumed = run_kvbench({"run", "--resume", run_dir.string(), "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto done = read_json(run_dir / "run.json");
  EXPECT_EQ(done["status"], "complete");
  EXPECT_EQ(done["resumed"].size(), 1U);
  expect_each_planned_call_once(run_dir);
  // Every nonce unique across the two sessions; elapsed time keeps growing across the pause.
  std::set<std::string> nonces;
  for (const auto& c : results::load_run(run_dir).calls) {
    EXPECT_TRUE(nonces.insert(c.nonce).second) << c.nonce;
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq;
  }
}

// The number of lines of `path` that contain `needle`.
std::size_t lines_with(const fs::path& path, const std::string& needle) {
  std::ifstream in(path);
  std::size_t n = 0;
  std::string line;
  while (std::getline(in, line)) {
    n += line.find(needle) != std::string::npos ? 1U : 0U;
  }
  return n;
}

// Ctrl-C during a long prefill: the call in flight is cut off, not waited out, and recorded as
// aborted; the server is stopped; --resume repeats that call and nothing else.
TEST(Faults, SigintAbortsTheLongCallInFlightAndResumeRepeatsOnlyIt) {
  const fs::path dir = fresh_dir("sigint-long");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "sigint-long",
    "server": {"model": "synthetic:small"},
    "factors": {"prompt_tokens": [64, 8000], "num_ctx": [8192]},
    "repeats": 1, "warmup": 1, "max_tokens": 4})");
  const fs::path log = dir / "log";
  auto kv = start_kvbench({"run", scenario, "--results", (dir / "runs").string()}, log);
  ASSERT_TRUE(wait_until([&] { return lines_with(log, "timed prompt_tokens=8000") > 0; }, 300))
      << "the long call never started";
  std::this_thread::sleep_for(milliseconds(300));  // well inside its prefill (seconds here)
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(kv.pid(), SIGINT), 0);
  const auto status = kv.wait_for(milliseconds(60000));
  const double exit_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  ASSERT_TRUE(status) << "kvbench did not stop after SIGINT";
  EXPECT_EQ(status->code, 130);
  ::testing::Test::RecordProperty("sigint_to_exit_ms", static_cast<int>(exit_s * 1000));
  std::printf("SIGINT to exit with an 8000-token prefill in flight: %.3f s\n", exit_s);

  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto before = read_calls(run_dir);
  ASSERT_FALSE(before.empty());
  const CallRecord& cut = before.back();
  EXPECT_EQ(cut.outcome, kvbench::Outcome::aborted);
  EXPECT_EQ(cut.error, "interrupted");
  EXPECT_EQ(cut.prompt_tokens, 8000);
  EXPECT_EQ(cut.client.tokens, 0) << "aborted before its first token";
  for (std::size_t i = 0; i + 1 < before.size(); ++i) {
    EXPECT_EQ(before[i].outcome, kvbench::Outcome::ok) << before[i].seq;
  }
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["status"], "incomplete");
  for (const auto& b : run["blocks"]) {
    const std::string url = b["url"];
    EXPECT_THAT(processes_with("--port " + url.substr(url.rfind(':') + 1)), ::testing::IsEmpty());
  }

  const auto resumed = run_kvbench({"run", "--resume", run_dir.string(), "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto after = read_calls(run_dir);
  ASSERT_GT(after.size(), before.size());
  // The resumed session's first record is the aborted call again, done in full; the calls
  // recorded before the interrupt are not run again.
  const CallRecord& repeat = after[before.size()];
  EXPECT_EQ(repeat.seq, cut.seq);
  EXPECT_EQ(repeat.outcome, kvbench::Outcome::ok) << repeat.error;
  EXPECT_GT(repeat.client.e2e_ms.value_or(0), cut.client.e2e_ms.value_or(0))
      << "the cut call had not been waited out";
  for (std::size_t i = before.size() + 1; i < after.size(); ++i) {
    for (const auto& b : before) {
      EXPECT_NE(after[i].seq, b.seq) << "a call recorded before the interrupt ran again";
    }
  }
  expect_each_planned_call_once(run_dir);
  const auto report = run_kvbench({"report", run_dir.string()});
  EXPECT_EQ(report.exit_code, 0) << report.err;
}

// The same with two streams in flight: both end aborted, no further call starts, and --resume
// runs exactly the calls that were not done.
TEST(Faults, SigintAbortsEveryStreamInFlightAndStartsNoMore) {
  const fs::path dir = fresh_dir("sigint-streams");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "sigint-streams",
    "server": {"model": "synthetic:small"},
    "factors": {"prompt_tokens": [3000], "num_ctx": [8192]},
    "concurrency": {"streams": [2]}, "repeats": 4, "warmup": 0, "max_tokens": 4})");
  const fs::path log = dir / "log";
  auto kv = start_kvbench({"run", scenario, "--results", (dir / "runs").string()}, log);
  fs::path run_dir;
  ASSERT_TRUE(wait_until(
      [&] {
        if (!fs::exists(dir / "runs") || fs::is_empty(dir / "runs")) {
          return false;
        }
        run_dir = only_run_dir(dir / "runs");
        return lines_with(run_dir / "server-block0.log", "task.n_tokens = 3000") >= 2;
      },
      300))
      << "two long calls were never in flight";
  ASSERT_EQ(::kill(kv.pid(), SIGINT), 0);
  const auto status = kv.wait_for(milliseconds(60000));
  ASSERT_TRUE(status) << "kvbench did not stop after SIGINT";
  EXPECT_EQ(status->code, 130);
  const auto before = read_calls(run_dir);
  ASSERT_EQ(before.size(), 2U) << "the two in flight, and none started after the interrupt";
  for (const auto& c : before) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::aborted) << c.seq;
    EXPECT_EQ(c.error, "interrupted") << c.seq;
  }
  const auto resumed = run_kvbench({"run", "--resume", run_dir.string(), "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(read_calls(run_dir).size(), 6U);
  expect_each_planned_call_once(run_dir);
  for (const auto& c : results::load_run(run_dir).calls) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << " " << c.error;
  }
}

// A small tmpfs mounted for one test (root only), unmounted when the test ends either way.
struct SmallDisk {
  explicit SmallDisk(fs::path at, const std::string& size) : path(std::move(at)) {
    fs::create_directories(path);
    const auto r =
        process::run_capture({"mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", path.string()},
                             std::chrono::seconds(10));
    mounted = r.status && r.status->code == 0;
    why = r.stderr_text;
  }
  ~SmallDisk() {
    if (mounted) {
      process::run_capture({"umount", "-l", path.string()}, std::chrono::seconds(10));
    }
  }
  bool grow(const std::string& size) const {
    const auto r = process::run_capture({"mount", "-o", "remount,size=" + size, path.string()},
                                        std::chrono::seconds(10));
    return r.status && r.status->code == 0;
  }
  fs::path path;
  bool mounted = false;
  std::string why;
};

// The results disk fills up mid-run (the server's log and the records share a 256 KiB tmpfs):
// kvbench stops with a clear error, every record on disk is whole, and --resume, once there is
// room, completes the plan with each call once.
TEST(Faults, AFullResultsDiskStopsTheRunCleanlyAndResumeCompletesIt) {
  const fs::path dir = fresh_dir("disk-full");
  const SmallDisk disk(dir / "disk", "256k");
  if (!disk.mounted) {
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << disk.why;
  }
  const std::string scenario = write_file(dir, "s.json", R"({"name": "disk-full",
    "server": {"model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [64, 128, 256], "num_ctx": [1024]},
    "repeats": 60, "warmup": 1, "max_tokens": 8})");
  const auto full = run_kvbench({"run", scenario, "--results", disk.path.string(), "-q"});
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_THAT(full.err, ::testing::HasSubstr("No space left on device"));
  EXPECT_THAT(full.err, ::testing::HasSubstr("every record before it is intact"));
  EXPECT_THAT(full.err, ::testing::HasSubstr("kvbench run --resume"));
  const fs::path run_dir = only_run_dir(disk.path);
  std::vector<CallRecord> kept;
  ASSERT_NO_THROW(kept = read_calls(run_dir)) << "a record was left half-written";
  ASSERT_GT(kept.size(), 0U);
  ASSERT_LT(kept.size(), 181U);
  EXPECT_THAT(processes_with("synthetic-tiny"), ::testing::IsEmpty()) << "the server was left";

  ASSERT_TRUE(disk.grow("16m"));
  const auto resumed = run_kvbench({"run", "--resume", run_dir.string(), "-q"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto all = read_calls(run_dir);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(all[i].nonce, kept[i].nonce) << "a record written before the disk filled changed";
  }
  expect_each_planned_call_once(run_dir);
}

// Writes an executable shell script to dir/name.
fs::path write_script(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path p = dir / name;
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

// A server that never becomes ready: its block is given up after --start-timeout, the process is
// stopped, and the run says which block never started and exits 3.
TEST(Faults, AServerThatNeverBecomesReadyIsStoppedAfterTheStartTimeout) {
  const fs::path dir = fresh_dir("never-ready");
  const fs::path fake = write_script(dir, "slow-server", R"sh(case "$1" in
  --version) echo "version: 1 (never ready)"; exit 0;;
esac
echo "loading, forever"
exec sleep 297
)sh");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "never-ready",
    "server": {"model": "synthetic:tiny"}, "factors": {"prompt_tokens": [64]},
    "repeats": 2, "warmup": 0})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q",
                              "--detail", "--server-bin", fake.string(), "--start-timeout", "2"},
                             120);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("block 0 (num_ctx"));
  EXPECT_THAT(r.err, ::testing::HasSubstr("was not ready within 2 s"));
  EXPECT_THAT(r.err, ::testing::HasSubstr("loading, forever")) << "the end of its log is shown";
  EXPECT_THAT(r.out, ::testing::HasSubstr("short of the plan: block 0"));
  EXPECT_THAT(processes_with("sleep 297"), ::testing::IsEmpty()) << "the server was left running";
  for (const auto& c : read_calls(only_run_dir(dir / "runs"))) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::server_start_error) << c.seq;
  }
}

// The port kvbench chose is taken before the server binds it (here: the first start says so, as
// llama-server does, and exits): the server is started again on another port and the run
// completes, with the retry in run.json.
TEST(Faults, APortTakenBeforeTheServerBindsItIsRetriedOnAnother) {
  const fs::path dir = fresh_dir("port-race");
  const fs::path tries = dir / "tries";
  const fs::path wrapper = write_script(dir, "racy-server",
                                        "case \"$1\" in --version) exec '" + llama_server_path() +
                                            "' --version;; esac\n"
                                            "echo x >> '" +
                                            tries.string() +
                                            "'\n"
                                            "if [ \"$(wc -l < '" +
                                            tries.string() +
                                            "')\" -eq 1 ]; then\n"
                                            "  echo \"couldn't bind HTTP server socket, hostname: "
                                            "127.0.0.1\" >&2; exit 1\n"
                                            "fi\n"
                                            "exec '" +
                                            llama_server_path() + "' \"$@\"\n");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "port-race",
    "server": {"model": "synthetic:tiny"}, "factors": {"prompt_tokens": [64]},
    "repeats": 2, "warmup": 0, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q",
                              "--server-bin", wrapper.string()},
                             300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = read_json(only_run_dir(dir / "runs") / "run.json");
  ASSERT_EQ(run["blocks"].size(), 1U);
  EXPECT_EQ(run["blocks"][0]["port_retries"], 1);
  EXPECT_EQ(lines_in(tries), 2U);
  for (const auto& c : read_calls(only_run_dir(dir / "runs"))) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << " " << c.error;
  }
}

// A server that stops answering mid-stream (SIGSTOP while it streams a long answer): that call
// ends at the per-call timeout with the tokens it had, and the run goes on to a clean finish.
TEST(Faults, AServerThatStopsMidStreamHitsTheCallTimeoutAndTheRunGoesOn) {
  const fs::path dir = fresh_dir("sigstop");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "sigstop",
    "server": {"model": "synthetic:tiny"},
    "factors": {"prompt_tokens": [64], "num_ctx": [2048]},
    "repeats": 12, "warmup": 0, "max_tokens": 1500, "timeout_s": 4})");
  const fs::path log = dir / "log";
  auto kv = start_kvbench({"run", scenario, "--results", (dir / "runs").string()}, log);
  ASSERT_TRUE(wait_until([&] { return lines_with(log, "[4/12]") > 0; }, 300));
  std::this_thread::sleep_for(milliseconds(250));  // its answer takes most of a second
  const fs::path run_dir = only_run_dir(dir / "runs");
  const auto servers = processes_with("synthetic-tiny");
  ASSERT_EQ(servers.size(), 1U);
  ASSERT_EQ(::kill(servers[0], SIGSTOP), 0);
  const bool timed_out = wait_until(
      [&] {
        const auto calls = read_calls(run_dir);
        return !calls.empty() && calls.back().outcome == kvbench::Outcome::timeout;
      },
      60);
  ::kill(servers[0], SIGCONT);
  ASSERT_TRUE(timed_out) << "the stopped call was not ended by its timeout";
  const auto status = kv.wait_for(milliseconds(300000));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0) << "one timeout in twelve calls is within the validity limit";
  int timeouts = 0;
  for (const auto& c : read_calls(run_dir)) {
    if (c.outcome == kvbench::Outcome::timeout) {
      ++timeouts;
      EXPECT_GT(c.client.tokens, 0) << "stopped mid-stream, after some tokens";
      EXPECT_LT(c.client.tokens, 1500);
    } else {
      EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << " " << c.error;
    }
  }
  EXPECT_EQ(timeouts, 1);
  EXPECT_EQ(read_calls(run_dir).size(), 12U);
}

TEST(Faults, ServerKilledMidBlockIsRestartedAndTheRunCompletes) {
  const fs::path dir = fresh_dir("kill9");
  const auto synth = run_kvbench({"model", "synth", "--preset", "tiny", "--seed", "11", "-o",
                                  (dir / "kill9-model.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const std::string scenario = write_file(dir, "s.json",
                                          R"({"name": "kill9",
    "server": {"model": ")" + (dir / "kill9-model.gguf").string() +
                                              R"("},
    "factors": {"prompt_tokens": [300, 600, 900], "num_ctx": [2048]},
    "repeats": 6, "warmup": 1, "max_tokens": 16})");
  auto kv = start_kvbench({"run", scenario, "--results", (dir / "runs").string()}, dir / "log");
  const fs::path run_dir = wait_for_records(dir / "runs", 4);
  ASSERT_FALSE(run_dir.empty()) << "no records appeared";
  const auto servers = processes_with("kill9-model.gguf");
  ASSERT_FALSE(servers.empty());
  for (int pid : servers) {
    ::kill(pid, SIGKILL);
  }
  const auto status = kv.wait_for(milliseconds(600000));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 0);
  const auto run = read_json(run_dir / "run.json");
  EXPECT_EQ(run["status"], "complete");
  ASSERT_EQ(run["blocks"].size(), 1U);
  ASSERT_EQ(run["blocks"][0]["restarts"].size(), 1U);
  EXPECT_THAT(run["blocks"][0]["restarts"][0]["exit"].get<std::string>(),
              ::testing::HasSubstr("signal 9"));
  expect_each_planned_call_once(run_dir);
  const auto calls = read_calls(run_dir);
  int failed = 0;
  int last_failed = -1;
  for (const auto& c : calls) {
    if (!c.ok()) {
      ++failed;
      last_failed = c.seq;
    }
  }
  EXPECT_EQ(failed, 1) << "only the interrupted call fails";
  for (const auto& c : calls) {
    if (c.seq > last_failed) {
      EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq;
    }
  }
  EXPECT_THAT(processes_with("kill9-model.gguf"), ::testing::IsEmpty());
}

TEST(Faults, ShellMetacharactersReachTheServerAsOneArgumentEach) {
  const fs::path dir = fresh_dir("metachar");
  // A stand-in server that writes each argument it gets on its own line, then fails to start.
  const fs::path fake = dir / "fake-server";
  std::ofstream(fake) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \""
                      << (dir / "argv.txt").string() << "\"\nexit 3\n";
  fs::permissions(fake, fs::perms::owner_all);
  const std::string evil1 = "--x; touch " + (dir / "pwned1").string();
  const std::string evil2 = "$(touch " + (dir / "pwned2").string() + ")";
  const std::string evil3 = "`touch " + (dir / "pwned3").string() + "` 'quoted' \"double\" | &&";
  nlohmann::json sc = {{"name", "metachar"},
                       {"server", {{"binary", fake.string()}, {"args", {evil1, evil2, evil3}}}},
                       {"factors", {{"prompt_tokens", {16}}, {"num_ctx", 1024}}},
                       {"repeats", 1},
                       {"warmup", 0},
                       {"max_tokens", 4}};
  const std::string scenario = write_file(dir, "s.json", sc.dump());
  const auto r =
      run_kvbench({"run", scenario, "--results", (dir / "runs").string(), "-q", "--detail"});
  // A server that fails to start is a measurement, but a run that measured nothing is not a pass.
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err,
              ::testing::HasSubstr("kvbench run: block 0 (num_ctx 1024, f16) never started"));
  EXPECT_THAT(r.out, ::testing::HasSubstr("- short of the plan: block 0 (num_ctx 1024, f16) never "
                                          "started"));
  std::ifstream in(dir / "argv.txt");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
  }
  EXPECT_THAT(lines, ::testing::Contains(evil1));
  EXPECT_THAT(lines, ::testing::Contains(evil2));
  EXPECT_THAT(lines, ::testing::Contains(evil3));
  EXPECT_FALSE(fs::exists(dir / "pwned1"));
  EXPECT_FALSE(fs::exists(dir / "pwned2"));
  EXPECT_FALSE(fs::exists(dir / "pwned3"));
  const auto calls = read_calls(only_run_dir(dir / "runs"));
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].outcome, kvbench::Outcome::server_start_error);
  EXPECT_THAT(calls[0].error, ::testing::HasSubstr("exited with code 3"));
}

// The managed llama-server demands the key; each kind sends it its own way (a bearer token, or
// Anthropic's x-api-key) and writes it nowhere.
class ApiKeyKinds : public ::testing::TestWithParam<std::string> {};

TEST_P(ApiKeyKinds, ApiKeyIsUsedButNeverWrittenAnywhere) {
  const fs::path dir = fresh_dir("apikey-" + GetParam());
  const std::string secret = "kvb-secret-" + std::to_string(::getpid()) + "-7f3a9c";
  const std::string scenario = write_file(dir, "s.json", R"({"name": "key",
    "server": {"kind": ")" + GetParam() + R"(", "model": "synthetic:tiny",
               "api_key_env": "KVBENCH_TEST_API_KEY"},
    "factors": {"prompt_tokens": [64, 128], "num_ctx": 1024}, "repeats": 1, "max_tokens": 4})");
  const auto r = run_kvbench({"run", scenario, "--results", (dir / "runs").string()}, 600,
                             {{"KVBENCH_TEST_API_KEY", secret}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run_dir = only_run_dir(dir / "runs");
  for (const auto& c : read_calls(run_dir)) {
    EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << "the server demands the key: " << c.error;
  }
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  EXPECT_EQ(r.err.find(secret), std::string::npos);
  const auto rep = run_kvbench({"report", run_dir.string(), "--json", (dir / "r.json").string(),
                                "--calls-csv", (dir / "c.csv").string()});
  EXPECT_EQ(rep.out.find(secret), std::string::npos);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "s.json") {
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find(secret), std::string::npos) << e.path() << " holds the API key";
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, ApiKeyKinds,
                         ::testing::Values("llama-server", "openai", "anthropic"),
                         [](const auto& p) {
                           return p.param == "llama-server" ? std::string("native") : p.param;
                         });

// Runs recorded by earlier kvbench versions (tests/data/runs, record version 1), cut short as an
// interrupted run leaves them, resume on the real server: the rest of the plan runs in order with
// the run's own id, and every resumed call reuses exactly what was predicted (a resumed
// conversation goes on from its recorded answers on a fresh server, which holds none of them; a
// pair cut between its reads is sent again whole, its first cold read kept in calls.jsonl).
TEST(Faults, ARunRecordedByAnEarlierVersionResumesToItsEnd) {
  const fs::path dir = fresh_dir("resume-recorded");
  // Cut between two prefix-reuse pairs (seq 18 ends one), between the cold and the edited read of
  // a pair (seq 17 and 18), and within conversations' turns.
  for (const auto& [name, keep] : std::vector<std::pair<std::string, std::size_t>>{
           {"prefix-reuse-tiny", 19}, {"prefix-reuse-tiny", 18}, {"conversation-tiny", 20}}) {
    SCOPED_TRACE(name + " cut after " + std::to_string(keep) + " records");
    const fs::path run_dir = dir / (name + "-" + std::to_string(keep));
    fs::copy(fs::path(KVBENCH_SOURCE_DIR) / "tests/data/runs" / name, run_dir);
    std::vector<std::string> lines;
    {
      std::ifstream in(run_dir / "calls.jsonl");
      for (std::string line; std::getline(in, line) && lines.size() < keep;) {
        lines.push_back(line);
      }
    }
    {
      std::ofstream out(run_dir / "calls.jsonl", std::ios::trunc);
      for (const auto& l : lines) {
        out << l << "\n";
      }
    }
    const std::string run_id = read_json(run_dir / "run.json")["run_id"];
    const auto resumed = run_kvbench(
        {"run", "--resume", run_dir.string(), "-q", "--server-bin", llama_server_path()});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_EQ(read_json(run_dir / "run.json")["status"], "complete");
    expect_each_planned_call_once(run_dir);
    const auto calls = results::load_run(run_dir).calls;
    // The last record kept, when it is the cold read of a pair cut in two, was sent again.
    const bool cut_pair = calls.at(keep - 1).pair_role == PairRole::cold;
    EXPECT_EQ(cut_pair, keep == 18);
    if (cut_pair) {
      EXPECT_EQ(read_calls(run_dir).size(), calls.size() + 1) << "both cold reads kept";
    }
    for (std::size_t i = cut_pair ? keep - 1 : keep; i < calls.size(); ++i) {
      const auto& c = calls[i];
      EXPECT_EQ(c.run_id, run_id) << c.seq;
      EXPECT_EQ(c.outcome, kvbench::Outcome::ok) << c.seq << ": " << c.error;
      ASSERT_TRUE(c.server.cache_n && c.expected_cache_n) << c.seq;
      EXPECT_EQ(*c.server.cache_n, *c.expected_cache_n) << c.seq;
    }
  }
}

}  // namespace
}  // namespace kvbench::itest
