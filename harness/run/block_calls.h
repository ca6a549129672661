#pragma once
// The calls of one block on its server: one at a time through OneAtATime, or those a workload
// sends together (and every call of a concurrent block) through the driver of many streams. A
// server that dies after a failed call is restarted, a bounded number of times, or the rest of
// its block is recorded as failed.

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "harness/plan/plan.h"
#include "harness/results/manifest.h"
#include "harness/run/call_source.h"
#include "harness/run/run_folder.h"
#include "harness/run/runner.h"
#include "harness/run/servers.h"
#include "harness/run/streams.h"

namespace kvbench::run {

class BlockCalls {
 public:
  // `done`: the calls already recorded (a resumed run), which are not sent again.
  BlockCalls(const scenario::Scenario& s, RunContext& ctx, CallSource& source, RunFolder& folder,
             RunTime& time, const std::set<int>& done)
      : s_(s), ctx_(ctx), source_(source), folder_(folder), time_(time), done_(done) {}

  // Runs the block's calls on `server` (reset() of the source already done); restarts go into
  // `info`, as does what a concurrent block measured of itself.
  void run(BlockServer& server, const plan::Block& block, results::BlockInfo& info);
  // Records every call of block.calls[from...] not yet recorded as never sent, with `outcome`.
  void fail_rest(const plan::Block& block, std::size_t from, Outcome outcome,
                 const std::string& error);

 private:
  void run_calls(BlockServer& server, const plan::Block& block, results::BlockInfo& info);
  // Sends the calls of block.calls[from, to) not yet recorded through the driver of many
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
  bool done(int seq) const { return done_.count(seq) != 0; }
  // This machine's CPU clock before a call, where it is the server's too (not attached).
  std::function<std::optional<double>()> cpu_clock() const;

  const scenario::Scenario& s_;
  RunContext& ctx_;
  CallSource& source_;
  RunFolder& folder_;
  RunTime& time_;
  const std::set<int>& done_;
};

}  // namespace kvbench::run
