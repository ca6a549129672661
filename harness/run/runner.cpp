#include "harness/run/runner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/measure/machine_state.h"
#include "harness/plan/plan.h"
#include "harness/process/signals.h"
#include "harness/prompt/prompt.h"
#include "harness/results/results.h"
#include "harness/run/answers_step.h"
#include "harness/run/block_calls.h"
#include "harness/run/run_folder.h"
#include "harness/run/workloads.h"

namespace kvbench::run {

namespace fs = std::filesystem;

namespace {

class Runner {
 public:
  Runner(const scenario::Scenario& s, const RunOptions& o, RunContext& ctx,
         std::optional<ResumeState> resume = {})
      : s_(s),
        o_(o),
        ctx_(ctx),
        plan_(plan::make_plan(s)),
        done_(resume ? resume->done : std::set<int>{}),
        resume_(std::move(resume)) {}

  RunSummary run();

 private:
  void prepare();
  void run_block(const plan::Block& block);
  bool done(int seq) const { return done_.count(seq) != 0; }

  const scenario::Scenario& s_;
  const RunOptions& o_;
  RunContext& ctx_;
  plan::Plan plan_;
  const std::set<int> done_;  // the calls already recorded (a resumed run)
  std::optional<ResumeState> resume_;
  std::unique_ptr<Servers> servers_;
  std::unique_ptr<RunFolder> folder_;
  std::unique_ptr<CallSource> source_;
  std::unique_ptr<RunTime> time_;
  AnswersStep answers_{s_};
};

void Runner::prepare() {
  std::string run_id = prompt::new_run_id();
  servers_ = ctx_.servers(s_, o_, ctx_.transport(), run_id);
  const ServersFound found = servers_->prepare();
  if (resume_) {
    folder_ = std::make_unique<RunFolder>(*resume_, plan_, o_, found);
    if (!folder_->run_id().empty()) {
      run_id = folder_->run_id();  // a resumed run keeps its own: every nonce stays unique
    }
  } else {
    folder_ = std::make_unique<RunFolder>(s_, plan_, o_, found, run_id);
  }
  source_ = make_source(s_, ctx_.wall_clock(), run_id);
  if (resume_) {
    source_->restore(resume_->recorded);
  }
  time_ = std::make_unique<RunTime>(ctx_.clock(), ctx_.wall_clock(),
                                    folder_->manifest().first_call_epoch_s,
                                    [this](double seconds) { ctx_.sleep(seconds); });
}

void Runner::run_block(const plan::Block& block) {
  results::BlockInfo info;
  info.index = block.index;
  info.replica = block.replica;
  info.num_ctx = block.config.num_ctx;
  info.cache_type = block.config.cache_type;
  info.variant = block.config.variant;
  if (block.config.slots != 1) {
    info.slots = block.config.slots;
  }
  const std::optional<measure::MachineState> state_at_start = ctx_.machine_state();
  BlockCalls calls(s_, ctx_, *source_, *folder_, *time_, done_);
  std::unique_ptr<BlockServer> server;
  try {
    server = servers_->open(block, folder_->dir(), info);
  } catch (const Error& e) {
    info.error = e.what();
    folder_->progress().note(
        fmt::format("block {}: the server did not start: {}", block.index, e.what()));
    if (!process::stop_requested()) {  // interrupted: its calls stay for --resume
      calls.fail_rest(block, 0, Outcome::server_start_error, e.what());
    }
  }
  if (server) {
    source_->reset(block, server->backend(), server->slot_ids());
    calls.run(*server, block, info);
    const bool answers = s_.answers.active() && !process::stop_requested();
    if (answers) {
      answers_.run(*server, block, false, *folder_);
    }
    server->close(info);
    if (answers && block.config.cache_type == s_.answers.reference) {
      answers_.run(*server, block, true, *folder_);
    }
  }
  if (const auto state_at_end = state_at_start ? ctx_.machine_state() : std::nullopt) {
    info.machine_state = measure::block_machine_state(
        *state_at_start, *state_at_end,
        folder_->manifest().machine ? folder_->manifest().machine->usable_cores : 0);
  }
  folder_->add_block(std::move(info));
}

RunSummary Runner::run() {
  prepare();
  for (const auto& block : plan_.blocks) {
    if (process::stop_requested()) {
      break;
    }
    if (!std::all_of(block.calls.begin(), block.calls.end(),
                     [&](const auto& c) { return done(c.seq); })) {
      run_block(block);
    }
  }
  folder_->close(!process::stop_requested() &&
                 done_.size() + static_cast<std::size_t>(folder_->summary().calls) ==
                     plan_.call_count());
  return folder_->summary();
}

}  // namespace

void RunContext::sleep(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

RunSummary run_plan(const scenario::Scenario& s, const RunOptions& options, RunContext& ctx,
                    std::optional<ResumeState> resume) {
  Runner runner(s, options, ctx, std::move(resume));
  return runner.run();
}

RunSummary run_scenario_once(const scenario::Scenario& s, const RunOptions& options,
                             RunContext& ctx) {
  return run_plan(s, options, ctx);
}

}  // namespace kvbench::run
