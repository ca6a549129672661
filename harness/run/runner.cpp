#include "harness/run/runner.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/load/block_stats.h"
#include "harness/load/server_queue.h"
#include "harness/measure/machine_state.h"
#include "harness/plan/plan.h"
#include "harness/process/signals.h"
#include "harness/prompt/prompt.h"
#include "harness/results/results.h"
#include "harness/run/answers_step.h"
#include "harness/run/one_at_a_time.h"
#include "harness/run/precision.h"
#include "harness/run/run_folder.h"
#include "harness/run/streams.h"
#include "harness/run/workloads.h"

namespace kvbench::run {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxRestarts = 3;  // per block

class Runner {
 public:
  Runner(const scenario::Scenario& s, const RunOptions& o, RunContext& ctx,
         std::optional<ResumeState> resume = {})
      : s_(s), o_(o), ctx_(ctx), plan_(plan::make_plan(s)), resume_(std::move(resume)) {}

  RunSummary run();

 private:
  void prepare();
  void run_block(const plan::Block& block);
  void run_calls(BlockServer& server, const plan::Block& block, results::BlockInfo& info);
  // Sends `calls` (those of block.calls[from, to) not yet recorded) through the driver of many
  // streams; returns its run and whether a call failed.
  std::pair<StreamsRun, bool> run_together(BlockServer& server, const plan::Block& block,
                                           std::size_t from, std::size_t to,
                                           const StreamSchedule& schedule);
  void run_concurrent(BlockServer& server, const plan::Block& block, results::BlockInfo& info);
  // After a failed call (the last of seq `after_seq`): when the server died, restarts it
  // (bounded) and returns true, or gives up and fails block.calls[rest_from...]. A server that
  // did not die: true.
  bool recover(BlockServer& server, const plan::Block& block, results::BlockInfo& info,
               int& restarts, int after_seq, std::size_t rest_from);
  void fail_rest_of_block(const plan::Block& block, std::size_t from, Outcome outcome,
                          const std::string& error);
  bool done(int seq) const { return resume_ && resume_->done.count(seq) != 0; }
  // This machine's CPU clock before a call, where it is the server's too (not attached).
  std::function<std::optional<double>()> cpu_clock() const {
    if (!ctx_.cpu_clock || !s_.server.url.empty()) {
      return {};
    }
    return ctx_.cpu_clock;
  }

  const scenario::Scenario& s_;
  const RunOptions& o_;
  RunContext& ctx_;
  plan::Plan plan_;
  std::optional<ResumeState> resume_;
  std::unique_ptr<ServerSession> session_;
  std::unique_ptr<RunFolder> folder_;
  std::unique_ptr<CallSource> source_;
  std::unique_ptr<RunTime> time_;
  AnswersStep answers_{s_};
};

void Runner::prepare() {
  std::string run_id = prompt::new_run_id();
  session_ = ctx_.session(s_, o_, ctx_.transport, run_id);
  const SessionInfo found = session_->prepare();
  if (resume_) {
    folder_ = std::make_unique<RunFolder>(*resume_, plan_, o_, found);
    if (!folder_->run_id().empty()) {
      run_id = folder_->run_id();  // a resumed run keeps its own: every nonce stays unique
    }
  } else {
    folder_ = std::make_unique<RunFolder>(s_, plan_, o_, found, run_id);
  }
  source_ = make_source(s_, ctx_.wall_clock, run_id);
  if (resume_) {
    source_->restore(resume_->recorded);
  }
  time_ = std::make_unique<RunTime>(ctx_.clock, ctx_.wall_clock,
                                    folder_->manifest().first_call_epoch_s, ctx_.sleep);
}

void Runner::fail_rest_of_block(const plan::Block& block, std::size_t from, Outcome outcome,
                                const std::string& error) {
  for (std::size_t i = from; i < block.calls.size(); ++i) {
    if (done(block.calls[i].seq)) {
      continue;
    }
    CallRecord r = source_->unsent(block.calls[i], block);
    r.outcome = outcome;
    r.error = error;
    folder_->write(r);
  }
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
  std::optional<measure::MachineState> state_at_start;
  if (ctx_.machine_state) {
    state_at_start = ctx_.machine_state();
  }
  std::unique_ptr<BlockServer> server;
  try {
    server = session_->open(block, folder_->dir(), info);
  } catch (const Error& e) {
    info.error = e.what();
    folder_->progress().note(
        fmt::format("block {}: the server did not start: {}", block.index, e.what()));
    if (!process::stop_requested()) {  // interrupted: its calls stay for --resume
      fail_rest_of_block(block, 0, Outcome::server_start_error, e.what());
    }
  }
  if (server) {
    source_->reset(block, server->backend(), server->slot_ids());
    if (s_.concurrency.active()) {
      run_concurrent(*server, block, info);
    } else {
      run_calls(*server, block, info);
    }
    const bool answers = s_.answers.active() && !process::stop_requested();
    if (answers) {
      answers_.run(*server, block, false, *folder_);
    }
    server->close(info);
    if (answers && block.config.cache_type == s_.answers.reference) {
      answers_.run(*server, block, true, *folder_);
    }
  }
  if (state_at_start) {
    info.detail["machine_state"] =
        measure::block_machine_state(*state_at_start, ctx_.machine_state(),
                                     folder_->manifest().machine.value("usable_cores", 0));
  }
  folder_->add_block(std::move(info));
}

void Runner::run_calls(BlockServer& server, const plan::Block& block, results::BlockInfo& info) {
  int restarts = 0;
  OneAtATime one(*source_, *time_, cpu_clock());
  for (std::size_t i = 0; i < block.calls.size(); ++i) {
    const auto& call = block.calls[i];
    if (done(call.seq)) {
      continue;
    }
    if (process::stop_requested()) {
      break;
    }
    if (const auto together = source_->together(block, i)) {
      const StreamSchedule schedule{together->slots, server.backend().capabilities().slot_pinning};
      const bool failed = run_together(server, block, i, together->end, schedule).second;
      i = together->end - 1;
      if (failed && !recover(server, block, info, restarts, block.calls[i].seq, together->end)) {
        break;
      }
      continue;
    }
    folder_->progress().call_started(call, block);
    const CallRecord r = one.send(call, server.backend());
    folder_->write(r);
    server.after_call(call);
    if (!r.ok() && !recover(server, block, info, restarts, call.seq, i + 1)) {
      break;
    }
  }
}

std::pair<StreamsRun, bool> Runner::run_together(BlockServer& server, const plan::Block& block,
                                                 std::size_t from, std::size_t to,
                                                 const StreamSchedule& schedule) {
  std::vector<plan::PlannedCall> calls;
  for (std::size_t i = from; i < to; ++i) {
    if (!done(block.calls[i].seq)) {
      calls.push_back(block.calls[i]);
    }
  }
  if (calls.empty()) {
    return {};
  }
  const int failed_before = folder_->summary().failed;
  const auto transport = ctx_.concurrent_transport();
  StreamsRun out =
      run_streams(calls, schedule, *source_, *folder_, server.backend(), *transport, *time_);
  server.after_call(calls.back());
  return {std::move(out), folder_->summary().failed > failed_before};
}

void Runner::run_concurrent(BlockServer& server, const plan::Block& block,
                            results::BlockInfo& info) {
  const auto caps = server.backend().capabilities();
  info.slots = block.config.slots;
  StreamSchedule schedule{block.config.slots, caps.slot_pinning};
  if (s_.concurrency.open_loop()) {
    schedule.rate_per_s = s_.concurrency.rate_per_s;
    schedule.seed = s_.seed * std::uint64_t{7919} + static_cast<std::uint64_t>(block.index);
  }
  const StreamsRun out = run_together(server, block, 0, block.calls.size(), schedule).first;
  if (s_.concurrency.open_loop()) {
    info.detail["deferred"] = out.deferred;
  }
  info.detail["concurrency"] = load::block_stats(out.records);
  if (caps.queue_in_durations) {
    info.detail["server_queue"] = load::server_queue(out.records);
  }
}

bool Runner::recover(BlockServer& server, const plan::Block& block, results::BlockInfo& info,
                     int& restarts, int after_seq, std::size_t rest_from) {
  results::ServerRestart restart;
  restart.after_seq = after_seq;
  if (!server.died(restart)) {
    return true;
  }
  // The server died: restart it (bounded), or give the rest of the block up.
  if (++restarts <= kMaxRestarts && server.restart(restart)) {
    source_->reset(block, server.backend(), {});
    info.restarts.push_back(restart);
    folder_->progress().note(
        fmt::format("block {}: the server died ({}); restarted", block.index, restart.exit));
    return true;
  }
  restart.gave_up = true;
  info.restarts.push_back(restart);
  fail_rest_of_block(
      block, rest_from, Outcome::server_died,
      fmt::format("the server died and {} restarts did not bring it back", kMaxRestarts));
  return false;
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
  const std::size_t before = resume_ ? resume_->done.size() : 0;
  folder_->close(!process::stop_requested() &&
                 before + static_cast<std::size_t>(folder_->summary().calls) == plan_.call_count());
  return folder_->summary();
}

}  // namespace

RunSummary run_plan(const scenario::Scenario& s, const RunOptions& options, RunContext& ctx,
                    std::optional<ResumeState> resume) {
  Runner runner(s, options, ctx, std::move(resume));
  return runner.run();
}

RunSummary run_scenario(const scenario::Scenario& s, const RunOptions& options, RunContext& ctx) {
  return until_precise(s, run_plan(s, options, ctx), options, ctx);
}

}  // namespace kvbench::run
