#pragma once
// The one clock every timestamp comes through. Production uses the steady clock; tests inject a
// FakeClock that advances by script.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace kvbench {

using Nanos = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  Clock() = default;
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;
  // Monotonic time since an arbitrary origin.
  virtual Nanos now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  Nanos now() const override {
    return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch());
  }
};

// Time since the Unix epoch (the wall clock: it can jump).
class SystemClock final : public Clock {
 public:
  Nanos now() const override {
    return std::chrono::duration_cast<Nanos>(std::chrono::system_clock::now().time_since_epoch());
  }
};

// Returns the current time, then advances it by `step` (0 by default). advance() moves it by hand.
// Safe to read and move from several threads (a runner's worker and its sending thread).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Nanos start = Nanos{0}, Nanos step = Nanos{0})
      : t_(start.count()), step_(step.count()) {}
  Nanos now() const override { return Nanos{t_.fetch_add(step_.load())}; }
  void advance(Nanos d) { t_ += d.count(); }
  void set_step(Nanos step) { step_ = step.count(); }

 private:
  mutable std::atomic<Nanos::rep> t_;
  std::atomic<Nanos::rep> step_;
};

// Wall-clock time as UTC RFC 3339 with milliseconds, e.g. 2026-11-30T03:10:00.123Z.
std::string utc_now_rfc3339();

}  // namespace kvbench
