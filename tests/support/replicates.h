#pragma once
// Monte Carlo tests under the sanitizers (a slow debug build; KVBENCH_SANITIZED, set by CMake for
// any compiler) run fewer replicates and print their
// rates without judging them; in the normal build they run in full and are judged.

namespace kvbench::test {

#if defined(KVBENCH_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Whether a simulated rate is judged in this build.
inline constexpr bool kJudgeRates = !kSanitized;

// `full` replicates in the normal build, `sanitized` under the sanitizers.
constexpr int replicates(int full, int sanitized) {
  return kSanitized ? sanitized : full;
}

}  // namespace kvbench::test
