#pragma once
// A planted slow-down for the validity tests: a thread stops a process (SIGSTOP) for a share of
// every 20 ms and lets it run (SIGCONT) for the rest, so every call it serves takes about
// 1 / (1 - share) times as long, as on a machine that clocks down. The share follows a profile
// of the seconds since the plant started: a smooth ramp, or a step.

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <thread>

namespace kvbench::itest {

class SlowDownPlant {
 public:
  using Profile = std::function<double(double seconds)>;  // share of the time stopped, 0-0.9

  SlowDownPlant(pid_t pid, Profile profile);
  ~SlowDownPlant();  // stops the thread and leaves the process running
  SlowDownPlant(const SlowDownPlant&) = delete;
  SlowDownPlant& operator=(const SlowDownPlant&) = delete;

  // From 0 at the start to `share` after `seconds`, then flat.
  static Profile ramp(double seconds, double share);
  // 0 until `at_seconds`, then `share`.
  static Profile step(double at_seconds, double share);

 private:
  pid_t pid_;
  Profile profile_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace kvbench::itest
