#pragma once
// The shape checks of a lesson reproduction: given the numbers measured here, whether each of the
// lesson's claims holds (pass), is contradicted (fail), or cannot be told apart from noise
// (inconclusive), and why. Pure: numbers in, verdicts out. Absolute times are never judged.

#include <optional>
#include <string>
#include <string_view>

#include "harness/stats/descriptive.h"

namespace kvbench::lesson {

enum class Verdict { pass, fail, inconclusive };
std::string_view to_string(Verdict v);

struct CheckResult {
  Verdict verdict = Verdict::inconclusive;
  std::string tolerance;  // the rule, stated
  std::string why;        // the numbers that decided it, in words
};

// TTFT rises with prompt length: the drift-aware fit's TTFT slope (ms per 1,000 prompt tokens)
// with its 95 % CI, and the median TTFT at the shortest and longest prompt. Pass: the CI lies
// above 0 and the longest median exceeds the shortest; fail: the CI lies below 0 or the longest
// median does not exceed the shortest; inconclusive otherwise or without a fit.
struct TtftInput {
  std::optional<double> slope_ms_per_ktok;
  std::optional<stats::Interval> slope_ci;
  std::optional<double> median_short_ms, median_long_ms;
};
CheckResult check_ttft_rises(const TtftInput& in);

// Decode rate falls with prompt length once drift is removed: the fit's prompt slope (tok/s per
// 1,000 prompt tokens, elapsed time in the model) with its 95 % CI. Pass: CI below 0; fail: CI
// above 0; inconclusive: the CI holds 0, or there is no fit.
struct DecodeInput {
  std::optional<double> slope_tps_per_ktok;
  std::optional<stats::Interval> slope_ci;
};
CheckResult check_decode_falls(const DecodeInput& in);

// A measured value against an expected one within a relative tolerance (memory slope against the
// KV arithmetic of the active cache type, or one cache type's KV size over another's). Pass:
// |measured / expected - 1| <= tolerance; fail: outside it and the CI (when there is one) lies
// wholly outside the band as well; inconclusive: no measurement, or a CI that reaches the band.
struct RatioInput {
  std::optional<double> measured;
  std::optional<stats::Interval> ci;
  std::optional<double> expected;
  double tolerance = 0.10;  // relative
  std::string what;         // "bytes per token", named in `why`
};
CheckResult check_relative(const RatioInput& in);

// The second read's share of the cold read against the reuse prediction: for an edit at f,
// 1 - f within an absolute tolerance; for a question-only change or an unchanged resend, at most
// `expected` (+ tolerance), i.e. "nearly free". Pass: the median within the band; fail: the
// median outside and the CI (when there is one) wholly outside too; inconclusive: no complete
// pair, or a CI reaching the band.
//
// Re-read tokens attend over the whole prefix, so each costs more than the cold read's average
// token: with a per-token cost a + b*i at position i and rho = b*n/a, an edit at f costs
//   R(f, rho) = (1 - f) * (1 + rho * (1 + f) / 2) / (1 + rho / 2),
// which runs from 1 - f (rho = 0) towards 1 - f^2. When `rho` is given (fitted over all edit
// positions of the run, see fit_attention_rho), the band's upper end is R(f, rho) + kRhoSlack
// instead of 1 - f + tolerance, whichever is higher.
inline constexpr double kRhoMax = 4.0;     // attention at the last token at most 4x the rest
inline constexpr double kRhoSlack = 0.05;  // absolute, above the fitted prediction
struct ReuseInput {
  std::optional<double> median_ratio;
  std::optional<stats::Interval> ci;
  int pairs = 0;
  double expected = 0;        // 1 - f, or the ceiling for "nearly free"
  bool at_most = false;       // true: a ceiling (question / none), false: a two-sided band
  double tolerance = 0.10;    // absolute
  std::optional<double> rho;  // fitted attention share; two-sided band only
};
CheckResult check_reuse(const ReuseInput& in);

// R(f, rho) above: the second read's expected share of the cold read for an edit at f in [0, 1].
double reuse_ratio_with_attention(double f, double rho);

// The rho in [0, kRhoMax] that best fits measured (f, ratio) points by least squares; nullopt
// with fewer than two points.
std::optional<double> fit_attention_rho(const std::vector<std::pair<double, double>>& points);

// The repeated-prompt trap: calls served from the prompt cache against cold reads of the same
// prompt (same token count). Pass: cold / cached median TTFT >= kTrapPass; fail: below
// kTrapFail, or repeated calls that were never served from the cache; inconclusive: in between,
// or no cold read to compare with.
inline constexpr double kTrapPass = 5.0;
inline constexpr double kTrapFail = 2.0;
struct TrapInput {
  int hits = 0;  // repeated calls the server answered from its cache
  int cold = 0;  // reads of the same prompt that were not
  std::optional<double> hit_ttft_ms, cold_ttft_ms;
};
CheckResult check_trap(const TrapInput& in);

}  // namespace kvbench::lesson
