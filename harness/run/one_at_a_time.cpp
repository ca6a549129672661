#include "harness/run/one_at_a_time.h"

#include <algorithm>
#include <string>

#include "harness/http/transport.h"
#include "harness/process/signals.h"

namespace kvbench::run {

CallRecord OneAtATime::send(const plan::PlannedCall& call, backend::Backend& be) {
  PreparedCall p = source_.prepare(call);
  if (!p.ready) {
    return p.record;
  }
  for (double wait = source_.wait_s(call, time_.clock().now());
       wait > 0 && !process::stop_requested(); wait = source_.wait_s(call, time_.clock().now())) {
    time_.sleep(std::min(wait, 0.1));
  }
  if (process::stop_requested()) {  // Ctrl-C before it was sent: --resume sends it
    p.record.outcome = Outcome::aborted;
    p.record.error = std::string(http::kInterruptedError);
    return p.record;
  }
  source_.expect(p, p.spec.slot);
  p.record.wall_start = utc_now_rfc3339();
  if (cpu_clock_) {
    p.record.cpu_mhz = cpu_clock_();
  }
  p.record.t_start_s = time_.elapsed_s(time_.clock().now());
  source_.finish(p, be.complete(p.spec));
  return p.record;
}

}  // namespace kvbench::run
