#pragma once
// Errors of kvbench itself (bad input, setup failures). Failures of a server under test are
// never thrown across the measurement loop: they are recorded as data on the call.

#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench {

// A setup or harness failure. exit_code() is what main() returns: 1 by default.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = 1)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Bad input from the user (a scenario, a flag, a file): exit code 2, nothing run.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(message, 2) {}
  // Several problems at once, one per line.
  explicit InputError(const std::vector<std::string>& problems);
};

}  // namespace kvbench
