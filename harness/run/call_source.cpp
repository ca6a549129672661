#include "harness/run/call_source.h"

#include <thread>

namespace kvbench::run {

double RunTime::elapsed_s(Nanos now) {
  if (!t0_) {
    // Elapsed time counts from the run's first call, across a resume too.
    const double epoch_now = std::chrono::duration<double>(wall_clock_.now()).count();
    if (!first_call_epoch_s_) {
      first_call_epoch_s_ = epoch_now;
    }
    const double since_first = epoch_now - *first_call_epoch_s_;
    t0_ = now - std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(since_first));
  }
  return std::chrono::duration<double>(now - *t0_).count();
}

void RunTime::sleep(double seconds) const {
  if (sleep_) {
    sleep_(seconds);
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
}

}  // namespace kvbench::run
