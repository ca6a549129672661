#include "slowdown_plant.h"

#include <signal.h>

#include <algorithm>
#include <chrono>

namespace kvbench::itest {

namespace {
constexpr auto kPeriod = std::chrono::milliseconds(20);
}

SlowDownPlant::SlowDownPlant(pid_t pid, Profile profile) : pid_(pid), profile_(std::move(profile)) {
  thread_ = std::thread([this] {
    const auto t0 = std::chrono::steady_clock::now();
    while (!stop_) {
      const auto start = std::chrono::steady_clock::now();
      const double s = std::chrono::duration<double>(start - t0).count();
      const double share = std::clamp(profile_(s), 0.0, 0.9);
      const auto stopped = std::chrono::duration_cast<std::chrono::microseconds>(kPeriod * share);
      if (stopped.count() > 0) {
        ::kill(pid_, SIGSTOP);
        std::this_thread::sleep_until(start + stopped);
        ::kill(pid_, SIGCONT);
      }
      std::this_thread::sleep_until(start + kPeriod);
    }
    ::kill(pid_, SIGCONT);
  });
}

SlowDownPlant::~SlowDownPlant() {
  stop_ = true;
  thread_.join();
  ::kill(pid_, SIGCONT);
}

SlowDownPlant::Profile SlowDownPlant::ramp(double seconds, double share) {
  return [=](double t) { return share * std::min(1.0, t / seconds); };
}

SlowDownPlant::Profile SlowDownPlant::step(double at_seconds, double share) {
  return [=](double t) { return t < at_seconds ? 0.0 : share; };
}

}  // namespace kvbench::itest
