#pragma once
// The prefix-reuse experiment's analysis: each cold/edited pair's time ratio, per edit position
// the median ratio with a bootstrap 95 % CI beside what "reuse up to the first difference"
// predicts and the lesson's figure, the server's reused-token count against the prediction, and
// a verdict in words. Also the repeated-prompt trap. Pure: records in, summaries out
// (report/prefix.h prints them).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/stats/descriptive.h"

namespace kvbench::analysis {

// The largest gap between a median ratio and its prediction still called consistent.
inline constexpr double kRatioTolerance = 0.1;

// One complete pair: both reads recorded and ok.
struct PairResult {
  int pair_id = 0;
  std::string edit_position;
  int prompt_tokens = 0;  // the factor level
  int num_ctx = 0;
  std::string cache_type;
  int tokens = 0;  // the edited prompt's token count (counted before sending)
  std::optional<int> first_diff;
  std::optional<double> cold_ttft_ms, edited_ttft_ms, cold_prompt_ms, edited_prompt_ms;
  std::optional<double> ttft_ratio, prompt_ms_ratio;  // edited / cold
  // What reuse up to the first difference predicts for the prompt time ratio:
  // (tokens the edited read must read) / (tokens the cold read had to read).
  std::optional<double> expected_ratio;
  std::optional<int> cache_n, expected_cache_n;  // the edited read's
  std::optional<int> cold_cache_n, cold_expected_cache_n;
  // The whole prompt as the server counted it: prompt_n + cache_n, or Ollama's prompt_eval_count.
  std::optional<int> cold_tokens_reported, edited_tokens_reported;
  // Placed by text on a server without token ids (Ollama): the first difference's share of the
  // prompt's bytes. first_diff is then an estimate from the length calibration, `tokens` the
  // count the server reported, and the expected ratio takes the cold read as reading everything.
  std::optional<double> text_fraction;
};

// Pairs whose two reads are both present and ok, in pair order. Incomplete pairs are left out.
std::vector<PairResult> collect_pairs(const std::vector<CallRecord>& calls);

// How many pairs a run planned (cold reads recorded) and how many were complete.
struct PairCounts {
  int planned = 0;
  int complete = 0;
};
PairCounts count_pairs(const std::vector<CallRecord>& calls);

struct PositionSummary {
  std::string edit_position;
  int prompt_tokens = 0;
  int pairs = 0;
  std::optional<double> one_minus_f;     // fractions only
  std::optional<double> expected_ratio;  // median over pairs of PairResult::expected_ratio
  // The same share of the attention work: with every token's cost growing with its position, the
  // tokens from the first difference on are the dear ones, e (2 - e) for a share e. The measured
  // ratio belongs between expected_ratio (every token costs the same) and this.
  std::optional<double> attention_ratio;
  std::optional<double> first_diff_share;  // median first_diff / tokens
  std::optional<double> prompt_ms_ratio;   // median
  std::optional<stats::Interval> prompt_ms_ci;
  std::optional<double> ttft_ratio;  // median
  std::optional<stats::Interval> ttft_ci;
  std::optional<double> lesson_ratio;  // from the lesson's figures, when it has this level
  std::string lesson_text;             // e.g. "0.78" or "0.09 s / 14.35 s"
  int reuse_checked = 0;               // pairs with a reported cache_n
  int reuse_matched = 0;               // of those, cache_n == expected_cache_n
  int reuse_max_gap = 0;               // largest |cache_n - expected_cache_n|
  double median_cache_n = 0;
  double median_expected_cache_n = 0;
  bool reuse_exact = false;     // cache_n equalled the prediction in every checked pair
  bool reuse_inferred = false;  // no pair had a cache_n: reuse is judged from the time alone
  // reuse_exact (or reuse_inferred), and the time ratio from expected_ratio to attention_ratio,
  // kRatioTolerance either side.
  bool consistent = false;
  std::string verdict;  // in words
};

// Groups pairs by (prompt_tokens, edit_position): fractions ascending, then the special levels.
// `figures` is the lesson's figures file (its prefix_reuse.edit_position object is read).
std::vector<PositionSummary> summarize_positions(const std::vector<PairResult>& pairs,
                                                 const nlohmann::json& figures);

// The verdict over all positions, in words.
std::string overall_verdict(const std::vector<PositionSummary>& rows);

// The repeated-prompt trap: timed single calls that read past their first line from the cache
// (flag prompt_cache_hit) against those of the same prompt length read cold.
struct TrapSummary {
  int prompt_tokens = 0;
  int hits = 0;
  int cold = 0;
  std::optional<double> hit_ttft_ms;   // median
  std::optional<double> cold_ttft_ms;  // median
  std::optional<double> speedup;       // cold / hit
};
std::vector<TrapSummary> summarize_trap(const std::vector<CallRecord>& calls);

// Everything a run says about prefix reuse, computed once.
struct PrefixReport {
  PairCounts counts;
  std::vector<PairResult> pairs;
  std::vector<PositionSummary> positions;
  std::vector<TrapSummary> trap;
};
PrefixReport prefix_report(const std::vector<CallRecord>& calls, const nlohmann::json& figures);

}  // namespace kvbench::analysis
