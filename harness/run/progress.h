#pragma once
// Progress on stderr: call i of n, its condition, elapsed and estimated remaining time. As lines
// (one per call and its result: for a log, a pipe, or -v), or on a terminal as one line that is
// redrawn in place, with failures and notes printed above it. Colour (failures red, flags yellow)
// only when asked for: the CLI asks on a terminal unless NO_COLOR is set or --color says no.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

#include "harness/core/record.h"
#include "harness/plan/plan.h"

namespace kvbench::run {

struct ProgressStyle {
  bool enabled = true;
  bool live = false;   // one line redrawn in place (a terminal)
  bool color = false;  // ANSI colours
};

class Progress {
 public:
  Progress(std::size_t total_calls, ProgressStyle style, std::FILE* out = stderr);
  // Ends a live line with how many calls were done and in how long.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void call_started(const plan::PlannedCall& call, const plan::Block& block);
  void call_done(const CallRecord& r);
  // The calls in flight at once from now on, as the live line names them ("3 conversations at
  // once"); empty: "N calls in flight".
  void together(std::string what);
  void note(const std::string& message);

 private:
  double elapsed_s() const;
  std::string eta() const;
  void print_line(const std::string& text);  // above a live line, or as a line
  void redraw();

  std::size_t total_;
  std::size_t done_ = 0;
  ProgressStyle style_;
  std::FILE* out_;
  std::string current_;   // the call in flight, for the live line
  std::string last_;      // the last result, for the live line
  std::string together_;  // the calls in flight at once (together())
  bool drawn_ = false;    // a live line is on screen
  bool started_ = false;  // call_started() named the call now ending
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// "1m05s", "42s", "1h02m".
std::string format_duration(double seconds);

}  // namespace kvbench::run
