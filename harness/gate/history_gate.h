#pragma once
// Gating separate sessions (results/README.md, "CI performance gate"): a new session value against
// the prediction interval over earlier sessions, or two sessions against each other with the
// session-to-session spread taken from a history. Never with within-session standard errors. Pure.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gate/output.h"
#include "harness/session/session.h"
#include "harness/stats/gate.h"

namespace kvbench::gate {

inline constexpr std::size_t kHistoryLimit = 64;  // sessions used, the most recent
inline constexpr std::size_t kMinHistory = 10;
inline constexpr double kHistoryQuantile = 0.99;

struct HistoryEntry {
  std::string metric;
  std::string condition;
  std::string variant;
  stats::Better better = stats::Better::higher;
  double margin = 0.0;
  double value = 0.0;      // the session judged
  double reference = 0.0;  // the history mean, or the baseline session's value
  double limit = 0.0;      // the worse-side limit: interval bound, or reference shifted by it
  std::size_t history_n = 0;
  double history_sd = 0.0;  // of the values (history gate) or of their logs (two sessions)
  stats::Verdict verdict = stats::Verdict::inconclusive;
  std::string reason;
};

// The prediction-interval rule (stats::history_gate) for one session value. Fewer than
// min_history values: INCONCLUSIVE with the reason.
HistoryEntry history_entry(const SessionValue& value, std::span<const double> history,
                           double margin, double quantile = kHistoryQuantile,
                           std::size_t min_history = kMinHistory);

// Candidate against baseline session: the slowdown s = ±(log c - log b) is judged against
// t_{n-1}(q)·sd(log history)·sqrt(2), the spread of a difference of two sessions. FAIL when s is
// beyond that limit and exp(s) - 1 beyond the margin; PASS otherwise; INCONCLUSIVE with fewer
// than min_history history values.
HistoryEntry compare_sessions(const SessionValue& baseline, const SessionValue& candidate,
                              std::span<const double> history, double margin,
                              double quantile = kHistoryQuantile,
                              std::size_t min_history = kMinHistory);

// Report rows (the overall verdict is stats::overall_verdict of the entries).
std::vector<ReportRow> history_rows(const std::vector<HistoryEntry>& entries,
                                    const std::string& comparison);

void to_json(nlohmann::json& j, const HistoryEntry& e);

}  // namespace kvbench::gate
