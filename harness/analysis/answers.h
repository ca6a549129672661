#pragma once
// Does the cache type change the answers? Each type's greedy answers against the reference
// type's, prompt by prompt: the share of identical tokens, where the first difference falls, how
// sure the reference was there (its top-1 margin), and how far the top-k distributions had
// drifted apart before it; and the control, the reference type on a second server start, which
// must agree exactly for a difference to be the cache type's. Pure: answers.jsonl lines in.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/answer_record.h"

namespace kvbench::analysis {

// One position's most likely tokens: (id, log-probability), most likely first.
using TopList = std::vector<std::pair<int, double>>;

// The total variation distance between two top-k distributions: half the sum, over the tokens
// of either list, of |p - q|, plus half of |p_rest - q_rest|, where a token missing from a list
// counts as 0 there and each list's rest (1 minus its probabilities' sum) is one more bucket.
// 0: the same lists; 1: no token in common and no rest. Pure.
double top_k_total_variation(const TopList& a, const TopList& b);

struct AnswerComparison {
  int positions = 0;              // the reference answer's length
  int identical = 0;              // positions with the same token as the reference
  std::optional<int> first_diff;  // index of the first differing token; none: identical
  // The reference's probability of its top token minus that of its second, at first_diff.
  std::optional<double> margin;
  // Mean total variation of the top-k distributions over the positions before first_diff (all
  // positions of an identical answer), where both read the same context; none: no position.
  std::optional<double> divergence;
};

AnswerComparison compare_answers(const std::vector<int>& ref_ids,
                                 const std::vector<TopList>& ref_top, const std::vector<int>& ids,
                                 const std::vector<TopList>& top);

// Two text-only answers (a server that gives no token ids): the same comparison by bytes, with
// no margin or divergence. Pure.
AnswerComparison compare_texts(const std::string& ref, const std::string& text);

// Every prompt of one cache type (num_ctx, variant) against the reference.
struct TypeAgreement {
  bool text_only = false;  // compared by text (bytes): first difference and share are of bytes
  std::string cache_type;
  int num_ctx = 0;
  std::string variant;
  int prompts = 0;                        // compared
  int identical_answers = 0;              // every token the same
  double identical_share = 0;             // mean share of identical tokens
  std::optional<double> mean_first_diff;  // over the prompts that differ
  std::optional<double> mean_margin;      // over the prompts that differ
  std::optional<double> mean_divergence;  // over the prompts with a position before
  int missing = 0;                        // prompts without an answer on one side (a failed call)
};

struct AnswersReport {
  bool present = false;
  std::string reference;
  int prompts = 0;  // prompts per block
  // The reference type's second server start against its first, per num_ctx (and variant).
  std::vector<TypeAgreement> controls;
  bool deterministic = false;        // every control agreed on every token of every prompt
  std::vector<TypeAgreement> types;  // every other type against the reference
  nlohmann::json to_json() const;
};

// Lines of answers.jsonl (results/answer_record.h); a later line for the same block, start and
// prompt wins (a resumed block). Blocks of one (num_ctx, variant, replica) are compared.
AnswersReport analyze_answers(const std::vector<results::AnswerRecord>& lines,
                              const std::string& reference);

}  // namespace kvbench::analysis
