#pragma once
// The prompts of a prefix-reuse pair: the cold read builds a fresh prompt (unique first line,
// plus a question or timestamp line where the edit position asks for one) and keeps it; the
// edited read right after it resends that prompt with one change of the same token count.
// Where the server gives no token ids (Ollama), the change is placed by text with the same byte
// length, and the counts the server reports for the two reads are compared after the fact.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/core/record.h"
#include "harness/plan/plan.h"
#include "harness/prompt/prompt.h"

namespace kvbench::run {

struct PairPrompt {
  prompt::Built built;
  std::vector<int> ids;
  bool same_count = true;  // the edit kept the token count (always true for a cold read)
};

class PairPrompts {
 public:
  // The prompt for a call of a pair, and its pair fields on `r` (pair id, role, edit position,
  // first difference, the edit; an edited read's nonce becomes its cold read's). `nonce` is the
  // cold read's first line, `now_unix_s` the wall time used for timestamp lines. Throws
  // kvbench::Error when the server cannot tokenize, or when an edited read has no cold prompt to
  // resend (its cold read failed to build).
  PairPrompt next(const plan::PlannedCall& call, CallRecord& r, const std::string& nonce,
                  std::uint64_t filler_seed, std::int64_t now_unix_s, backend::Backend& be);

  // After a call of a pair ran: keeps a cold read's reported prompt count, and flags an edited
  // read placed by text ("edit_changed_token_count") when its count differs from its cold read's.
  void check_reported_count(const plan::PlannedCall& call, CallRecord& r);

 private:
  PairPrompt cold(const plan::PlannedCall& call, const std::string& nonce,
                  std::uint64_t filler_seed, std::int64_t now_unix_s, backend::Backend& be);
  PairPrompt edited(const plan::PlannedCall& call, CallRecord& r, backend::Backend& be);
  PairPrompt edited_by_text(const plan::PlannedCall& call, CallRecord& r, backend::Backend& be);

  struct Pending {
    int pair = -1;
    std::string nonce;  // the cold read's first line, which the edited read repeats
    PairPrompt prompt;
    std::size_t span_pos = 0;  // the part a line edit changes (question word, timestamp line)
    std::size_t span_len = 0;
    std::vector<std::string> span_candidates;
  };
  std::optional<Pending> pending_;
  std::optional<std::pair<int, int>> cold_reported_;  // (pair, prompt count the server reported)
};

}  // namespace kvbench::run
