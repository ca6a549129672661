#pragma once
// The driver of one call at a time: each call made ready by its source, held back for as long as
// the source says, predicted from its slot, stamped, sent and awaited, and finished into its
// record. What the caller does between calls (write the record, probe memory, restart a server
// that died) stays the caller's.

#include <functional>
#include <optional>

#include "harness/backend/backend.h"
#include "harness/run/call_source.h"

namespace kvbench::run {

class OneAtATime {
 public:
  // `cpu_clock` reads this machine's CPU clock just before each call (the record's cpu_mhz);
  // empty, or nothing read: not recorded.
  OneAtATime(CallSource& source, RunTime& time,
             std::function<std::optional<double>()> cpu_clock = {})
      : source_(source), time_(time), cpu_clock_(std::move(cpu_clock)) {}

  // Sends `call` on `be` and returns its record. A call interrupted (Ctrl-C) before it was sent
  // (while it was made ready or held back) is not sent: its record says aborted, and --resume
  // sends it.
  CallRecord send(const plan::PlannedCall& call, backend::Backend& be);

 private:
  CallSource& source_;
  RunTime& time_;
  std::function<std::optional<double>()> cpu_clock_;
};

}  // namespace kvbench::run
