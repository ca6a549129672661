#pragma once
// The workload seam at run time. Whatever a scenario sends (a prompt sweep with its edit pairs,
// conversations, ...) reaches a driver as a CallSource: it makes each planned call ready to send,
// says how long to hold it back and what its server slot should reuse, and finishes it into its
// record once it ended. Records go to a RecordSink. The two drivers (one_at_a_time.h, streams.h)
// take any source, so a new workload is a new source and no driver changes for it.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/core/record.h"
#include "harness/plan/plan.h"
#include "harness/scenario/scenario.h"

namespace kvbench::run {

// A call made ready to send: its record so far, its request and its prompt's token ids. A source
// that watches its calls as they stream sets spec.watch (backend::TokenWatch): both drivers tell
// it of each token event as it arrives, on the thread that sends, and end the stream when it
// says so (the call is then answered with what it had: CallResult::ended).
struct PreparedCall {
  plan::PlannedCall call;
  CallRecord record;
  backend::CompletionSpec spec;
  std::vector<int> ids;
  int first_line_tokens = 0;
  bool exact = true;       // the prompt hit its token count
  bool same_count = true;  // an edited prompt kept its token count
  bool ready = false;      // false: `record` holds why preparing failed
  // A fresh read: its unique first line starts the prompt (not an edited resend).
  bool fresh = false;
  scenario::CacheRule cache_rule;  // how the server caches (server.cache_rule)
};

// Calls a workload sends in flight together: block.calls[from, end) over `slots` streams.
struct Together {
  std::size_t end = 0;
  int slots = 1;
  // Stream k reads server slot k where the server kind pins slots; false: the server picks.
  bool pin = true;
  // Where given, one per call of [from, end): when each is due, in seconds after the first is
  // handed to the driver (an open loop on the workload's own schedule).
  std::vector<double> due_s{};
  // How the progress line names them ("3 conversations at once"); empty: "N calls in flight".
  std::string what{};
};

class CallSource {
 public:
  CallSource() = default;
  virtual ~CallSource() = default;
  CallSource(const CallSource&) = delete;
  CallSource& operator=(const CallSource&) = delete;

  // A resumed run: the calls recorded before it stopped (their answers, first lines, ...).
  virtual void restore(const std::vector<CallRecord>& /*recorded*/) {}
  // The server of `block` was started (or restarted) and answers through `be`, valid until the
  // next reset. Slot 0 holds `slot0` (empty: nothing known) and no other slot holds anything.
  virtual void reset(const plan::Block& block, backend::Backend& be,
                     const std::vector<int>& slot0) = 0;
  // The record of `call` of `block` as the plan gives it, for a call that is never sent (its
  // server did not start, or died).
  virtual CallRecord unsent(const plan::PlannedCall& call, const plan::Block& block) const = 0;
  // The call's prompt, request and predictions; may call the server (tokenize, render). A call
  // that cannot be made ready comes back with ready false and its record saying why.
  virtual PreparedCall prepare(const plan::PlannedCall& call) = 0;
  // Calls of one lane are sent one after another, each made ready once the one before it ended
  // (a conversation's turns); nullopt: the call depends on no other.
  virtual std::optional<int> lane(const plan::PlannedCall& /*call*/) const { return std::nullopt; }
  // Whether the calls from block.calls[from] on go in flight together (a set of conversations);
  // nullopt: block.calls[from] is sent on its own.
  virtual std::optional<Together> together(const plan::Block& /*block*/,
                                           std::size_t /*from*/) const {
    return std::nullopt;
  }
  // Seconds from `now` before `call` may be sent (a conversation's think time). Both drivers ask
  // again when that time has come, until it is 0: a source may hold a call until an event it
  // watches (its other calls' tokens, CompletionSpec::watch).
  virtual double wait_s(const plan::PlannedCall& /*call*/, Nanos /*now*/) const { return 0; }
  // `r`'s call was sent `ms` after it was due (a schedule's queue): where its record keeps that.
  virtual void waited(CallRecord& r, double ms) const { r.queue_ms = ms; }
  // The transfer of `p` ended with `res`: the server slot it read is free again and holds what it
  // generated. Called before its finish(), on the thread that sends, by a driver of many streams.
  virtual void released(const PreparedCall& /*p*/, const backend::CallResult& /*res*/) {}
  // Just before `p` is sent on server slot `slot` (nullopt: the server picks one): the reuse its
  // record predicts from what that slot holds, which from now on is this call's prompt.
  virtual void expect(PreparedCall& p, std::optional<int> slot) = 0;
  // Once the call ended: its record filled from `res` (timings, server figures, outcome, flags).
  virtual void finish(PreparedCall& p, backend::CallResult res) = 0;
};

// Where records go, each as its call ends. A driver of many streams calls it from one thread.
class RecordSink {
 public:
  RecordSink() = default;
  virtual ~RecordSink() = default;
  RecordSink(const RecordSink&) = delete;
  RecordSink& operator=(const RecordSink&) = delete;

  virtual void write(const CallRecord& r) = 0;
};

// The run's time line as the drivers stamp it: the clock of every timestamp, seconds since the
// run's first call (across a resume too), and how a driver waits.
class RunTime {
 public:
  // `first_call_epoch_s` (kept in run.json) is set at the first call and read on a resume;
  // `sleep` waits the seconds it is given (tests advance a fake clock); empty: a real wait.
  RunTime(const Clock& clock, const Clock& wall_clock, std::optional<double>& first_call_epoch_s,
          std::function<void(double)> sleep = {})
      : clock_(clock),
        wall_clock_(wall_clock),
        first_call_epoch_s_(first_call_epoch_s),
        sleep_(std::move(sleep)) {}

  const Clock& clock() const { return clock_; }
  // Seconds from the run's first call to the clock reading `now`.
  double elapsed_s(Nanos now);
  // Whether sleep() advances a clock of its own (a test's): a driver then sleeps through it
  // instead of waiting on a condition.
  bool scripted_sleep() const { return static_cast<bool>(sleep_); }
  void sleep(double seconds) const;

 private:
  const Clock& clock_;
  const Clock& wall_clock_;
  std::optional<double>& first_call_epoch_s_;
  std::function<void(double)> sleep_;
  std::optional<Nanos> t0_;
};

}  // namespace kvbench::run
