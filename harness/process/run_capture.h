#pragma once
// Running a short command to completion and capturing what it prints: `llama-server --version`,
// `git rev-parse HEAD`, `nvidia-smi --query-...`. Started from an argument vector, never a shell.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/process/child.h"

namespace kvbench::process {

struct CaptureResult {
  std::string stdout_text;
  std::string stderr_text;
  // How the command ended; after a timeout, how the stop ended it (usually SIGTERM).
  std::optional<ExitStatus> status;
  bool timed_out = false;  // the command was stopped at the deadline
  bool truncated = false;  // output beyond max_bytes per stream was read and dropped
};

inline constexpr std::size_t kDefaultCaptureBytes = 1 << 20;

// Runs `spec` (its log_path and stdout_fd/stderr_fd are replaced by pipes) and collects stdout and
// stderr separately, at most `max_bytes` each. When the command has not finished within `timeout`,
// its group is stopped (SIGTERM, 500 ms, SIGKILL) and timed_out is set. Throws kvbench::Error
// when the program cannot be started; a non-zero exit is only reported in `status`.
CaptureResult run_capture(SpawnSpec spec, std::chrono::milliseconds timeout,
                          std::size_t max_bytes = kDefaultCaptureBytes);

// The same for a bare argument vector with kvbench's environment and working directory.
CaptureResult run_capture(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          std::size_t max_bytes = kDefaultCaptureBytes);

}  // namespace kvbench::process
