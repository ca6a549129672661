#include "harness/run/block_calls.h"

#include <fmt/format.h>

#include "harness/load/block_stats.h"
#include "harness/load/server_queue.h"
#include "harness/process/signals.h"
#include "harness/run/one_at_a_time.h"

namespace kvbench::run {

namespace {

constexpr int kMaxRestarts = 3;  // per block

}  // namespace

void BlockCalls::run(BlockServer& server, const plan::Block& block, results::BlockInfo& info) {
  if (s_.concurrency.active()) {
    run_concurrent(server, block, info);
  } else {
    run_calls(server, block, info);
  }
}

std::function<std::optional<double>()> BlockCalls::cpu_clock() const {
  if (!s_.server.url.empty()) {
    return {};
  }
  return [&ctx = ctx_] { return ctx.cpu_clock(); };
}

void BlockCalls::fail_rest(const plan::Block& block, std::size_t from, Outcome outcome,
                           const std::string& error) {
  for (std::size_t i = from; i < block.calls.size(); ++i) {
    if (done(block.calls[i].seq)) {
      continue;
    }
    CallRecord r = source_.unsent(block.calls[i], block);
    r.outcome = outcome;
    r.error = error;
    folder_.write(r);
  }
}

void BlockCalls::run_calls(BlockServer& server, const plan::Block& block,
                           results::BlockInfo& info) {
  int restarts = 0;
  OneAtATime one(source_, time_, cpu_clock());
  for (std::size_t i = 0; i < block.calls.size(); ++i) {
    const auto& call = block.calls[i];
    if (done(call.seq)) {
      continue;
    }
    if (process::stop_requested()) {
      break;
    }
    if (const auto together = source_.together(block, i)) {
      StreamSchedule schedule;
      schedule.slots = together->slots;
      schedule.pin = together->pin && server.backend().capabilities().slot_pinning;
      schedule.arrivals_s = together->due_s;
      folder_.progress().together(together->what);
      const bool failed = run_together(server, block, i, together->end, schedule).second;
      i = together->end - 1;
      if (failed && !recover(server, block, info, restarts, block.calls[i].seq, together->end)) {
        break;
      }
      continue;
    }
    folder_.progress().call_started(call, block);
    const CallRecord r = one.send(call, server.backend());
    folder_.write(r);
    server.after_call(call);
    if (!r.ok() && !recover(server, block, info, restarts, call.seq, i + 1)) {
      break;
    }
  }
}

std::pair<StreamsRun, bool> BlockCalls::run_together(BlockServer& server, const plan::Block& block,
                                                     std::size_t from, std::size_t to,
                                                     const StreamSchedule& schedule) {
  std::vector<plan::PlannedCall> calls;
  StreamSchedule left = schedule;  // the arrivals of the calls not done yet
  left.arrivals_s.clear();
  for (std::size_t i = from; i < to; ++i) {
    if (!done(block.calls[i].seq)) {
      calls.push_back(block.calls[i]);
      if (i - from < schedule.arrivals_s.size()) {
        left.arrivals_s.push_back(schedule.arrivals_s[i - from]);
      }
    }
  }
  if (calls.empty()) {
    return {};
  }
  if (!left.arrivals_s.empty()) {  // a resumed schedule goes on from its first call left
    const double first = left.arrivals_s.front();
    for (double& t : left.arrivals_s) {
      t -= first;
    }
  }
  const int failed_before = folder_.summary().failed;
  const auto transport = ctx_.concurrent_transport();
  StreamsRun out = run_streams(calls, left, source_, folder_, server.backend(), *transport, time_);
  server.after_call(calls.back());
  return {std::move(out), folder_.summary().failed > failed_before};
}

void BlockCalls::run_concurrent(BlockServer& server, const plan::Block& block,
                                results::BlockInfo& info) {
  const auto caps = server.backend().capabilities();
  info.slots = block.config.slots;
  StreamSchedule schedule;
  schedule.slots = block.config.slots;
  schedule.pin = caps.slot_pinning;
  if (s_.concurrency.open_loop()) {
    schedule.rate_per_s = s_.concurrency.rate_per_s;
    schedule.seed = s_.seed * std::uint64_t{7919} + static_cast<std::uint64_t>(block.index);
  }
  folder_.progress().together({});
  const StreamsRun out = run_together(server, block, 0, block.calls.size(), schedule).first;
  if (s_.concurrency.open_loop()) {
    info.deferred = out.deferred;
  }
  info.concurrency = load::block_stats(out.records);
  if (caps.queue_in_durations) {
    info.server_queue = load::server_queue(out.records);
  }
}

bool BlockCalls::recover(BlockServer& server, const plan::Block& block, results::BlockInfo& info,
                         int& restarts, int after_seq, std::size_t rest_from) {
  results::ServerRestart restart;
  restart.after_seq = after_seq;
  if (!server.died(restart)) {
    return true;
  }
  // The server died: restart it (bounded), or give the rest of the block up.
  if (++restarts <= kMaxRestarts && server.restart(restart)) {
    source_.reset(block, server.backend(), {});
    info.restarts.push_back(restart);
    folder_.progress().note(
        fmt::format("block {}: the server died ({}); restarted", block.index, restart.exit));
    return true;
  }
  restart.gave_up = true;
  info.restarts.push_back(restart);
  fail_rest(block, rest_from, Outcome::server_died,
            fmt::format("the server died and {} restarts did not bring it back", kMaxRestarts));
  return false;
}

}  // namespace kvbench::run
