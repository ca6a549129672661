#pragma once
// What a scenario's tests ask of a scenario that must be refused: the message of its exit 2.

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/scenario/scenario.h"

namespace kvbench::scenario {

// The error parsing `text` gives (an InputError, exit code 2); a test failure when it parses.
inline std::string scenario_error(std::string_view text) {
  try {
    parse_scenario(text, "s.json");
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text;
  return "";
}

}  // namespace kvbench::scenario
