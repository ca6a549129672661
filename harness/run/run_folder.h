#pragma once
// A run's folder while it runs: run.json (saved after every block), calls.jsonl (each record
// appended and flushed as its call ends), the progress line and the counts of the summary. It is
// the RecordSink of every driver.

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/plan/plan.h"
#include "harness/results/manifest.h"
#include "harness/results/results.h"
#include "harness/run/call_source.h"
#include "harness/run/progress.h"
#include "harness/run/runner.h"
#include "harness/run/servers.h"

namespace kvbench::run {

// What an interrupted run already holds.
struct ResumeState {
  std::filesystem::path run_dir;
  results::RunManifest run;
  std::set<int> done;
  std::vector<CallRecord> recorded;  // the calls recorded, for conversations to continue from
};

// Runs the plan of `s` once (without precision's continuation): into a new folder, or into the
// folder of `resume` the calls it has not recorded, in the original order and with its run id.
RunSummary run_plan(const scenario::Scenario& s, const RunOptions& options, RunContext& ctx,
                    std::optional<ResumeState> resume = {});

class RunFolder final : public RecordSink {
 public:
  // A new run: its folder under options.results_root, run.json with what `found` says of the
  // servers, and an empty calls.jsonl.
  RunFolder(const scenario::Scenario& s, const plan::Plan& plan, const RunOptions& o,
            const ServersFound& found, const std::string& run_id);
  // An interrupted run, in its own folder: throws InputError when its plan no longer matches its
  // scenario. A truncated last line of calls.jsonl is cut off.
  RunFolder(const ResumeState& resume, const plan::Plan& plan, const RunOptions& o,
            const ServersFound& found);

  const std::filesystem::path& dir() const { return dir_; }
  const std::string& run_id() const { return run_.run_id; }
  results::RunManifest& manifest() { return run_; }
  Progress& progress() { return *progress_; }
  const RunSummary& summary() const { return summary_; }

  // Appends and flushes `r` and counts it. A record that cannot be written (a full disk) throws
  // Error saying how to run the rest once there is room.
  void write(const CallRecord& r) override;
  // A block ended: its facts join run.json, which is saved.
  void add_block(results::BlockInfo info);
  // Appends a line of answers.jsonl (the answers experiment), opened at first use.
  void write_answer(const results::AnswerRecord& line);
  // The run ended, complete or not: its status and counts go into run.json.
  void close(bool complete);

 private:
  void save();
  ProgressStyle style() const;

  const RunOptions& o_;
  std::filesystem::path dir_;
  results::RunManifest run_;
  std::unique_ptr<results::RecordWriter> writer_;
  std::unique_ptr<results::RecordWriter> answers_;
  std::unique_ptr<Progress> progress_;
  RunSummary summary_;
};

}  // namespace kvbench::run
