#pragma once
// The progress line on stderr: call i of n, its condition, elapsed and estimated remaining time.

#include <chrono>
#include <cstddef>
#include <string>

#include "harness/core/record.h"
#include "harness/plan/plan.h"

namespace kvbench::run {

class Progress {
 public:
  Progress(std::size_t total_calls, bool enabled);
  void call_started(const plan::PlannedCall& call, const plan::Block& block);
  void call_done(const CallRecord& r);
  void note(const std::string& message);

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// "1m05s", "42s", "1h02m".
std::string format_duration(double seconds);

}  // namespace kvbench::run
