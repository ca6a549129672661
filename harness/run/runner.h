#pragma once
// Runs a scenario: one server per block (managed or attached), every call streamed, timed and
// appended to calls.jsonl as it completes.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "harness/core/clock.h"
#include "harness/http/transport.h"
#include "harness/measure/machine_state.h"
#include "harness/run/call_source.h"
#include "harness/run/servers.h"
#include "harness/scenario/scenario.h"

namespace kvbench::run {

struct RunOptions {
  std::filesystem::path results_root = "results";
  std::string server_binary;         // overrides server.binary and the search
  std::string model;                 // overrides server.model
  std::string url;                   // overrides server.url (attach)
  std::filesystem::path models_dir;  // where synthetic models are written; empty = default
  bool progress = true;              // a progress line on stderr per call
  bool live_progress = false;        // one line redrawn in place (stderr is a terminal)
  bool color = false;                // colours in the progress lines
  std::chrono::seconds ready_timeout{300};
  std::map<std::string, std::string> labels;  // --label k=v, kept in run.json
  std::string trace_shard;                    // --trace-shard K/N: a trace's shard to replay
  bool force = false;  // --force: start a managed server whose plan exceeds the memory
  // What an attached server answered when asked its kind (cli/attached_server.h), kept in
  // run.json's server.found; null when it was not asked.
  nlohmann::json found_server;
};

struct RunSummary {
  std::filesystem::path run_dir;
  int calls = 0;
  int failed = 0;
  int flagged = 0;
  bool complete = false;
};

// What a run takes from outside: its clocks, its transports and its servers. Production
// implements it from libcurl, the steady and system clocks and the server kinds' Servers
// (local::LocalRun); tests implement it with scripted ones.
class RunContext {
 public:
  virtual ~RunContext() = default;
  virtual const Clock& clock() const = 0;       // stamps every call
  virtual const Clock& wall_clock() const = 0;  // since the Unix epoch: time across a resume
  virtual http::Transport& transport() = 0;
  // A fresh transport for each concurrent block.
  virtual std::unique_ptr<http::ConcurrentTransport> concurrent_transport() = 0;
  // The servers of the scenario's server kind, made once per run before anything is written.
  virtual std::unique_ptr<Servers> servers(const scenario::Scenario& s, const RunOptions& options,
                                           http::Transport& transport,
                                           const std::string& run_id) = 0;
  // Samples the machine (governor, frequency, load, steal, GPU clocks) before and after each
  // block; nothing: nothing is recorded.
  virtual std::optional<measure::MachineState> machine_state() { return std::nullopt; }
  // Reads the CPU clock just before each call of one at a time (the record's cpu_mhz) of a
  // managed server, which runs on this machine; nothing read: not recorded.
  virtual std::optional<double> cpu_clock() { return std::nullopt; }
  // Waits this many seconds (a conversation's think time): the thread sleeps.
  virtual void sleep(double seconds);
};

// Applies the option overrides to a scenario (url, model, binary); `check_model` false leaves
// whether the server can run its model to a later call (an attached server's kind not yet asked).
scenario::Scenario with_overrides(scenario::Scenario s, const RunOptions& options,
                                  bool check_model = true);

// Throws InputError for a --url that with_overrides refuses (credentials in it, not http(s)).
void check_url_option(const std::string& url);

// Runs the whole plan once (precision's continuation is harness/precision's). Setup failures
// throw before anything is written; afterwards server failures are recorded on their calls and
// the run goes on.
RunSummary run_scenario_once(const scenario::Scenario& s, const RunOptions& options,
                             RunContext& ctx);

// Completes an interrupted run in its folder: the calls not yet recorded, in the original
// shuffled order, with the run's own id (so every nonce stays unique). A truncated last line of
// calls.jsonl is cut off first. Throws InputError when the folder is no kvbench run or its plan
// no longer matches its scenario.
RunSummary resume_run_once(const std::filesystem::path& run_dir, const RunOptions& options,
                           RunContext& ctx);

// Adds `extra_sets` counterbalanced block sets of every variant (ABBA...) to a finished run of a
// scenario with variants (or sets of every configuration to a run with precision), and runs them
// into the same folder with the run's own id (the plan of the earlier sets stays as it was).
// Throws InputError when the folder is no kvbench run, its scenario has neither variants nor
// precision, or extra_sets < 1.
RunSummary extend_run_once(const std::filesystem::path& run_dir, int extra_sets,
                           const RunOptions& options, RunContext& ctx);

}  // namespace kvbench::run
