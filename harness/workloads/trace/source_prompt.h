#pragma once
// What a replayed request's prompt is made of (TraceSource): token ids of ordinary words for kinds
// whose endpoint takes ids, or words each read alone through the server's tokenizer (and chat
// template) for kinds that take text.

#include <cstdint>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/workloads/trace/source.h"

namespace kvbench::run {

// SplitMix64's finalizer: a well-mixed 64-bit value of `x`, the same everywhere.
std::uint64_t trace_mix(std::uint64_t x);

// Distinct token ids of ordinary words, the first id of the text (a BOS) left out: what prompts
// are made of, so that no control token is sent. Ids 1,000 to 4,999 where the server has no
// tokenizer endpoint.
std::vector<int> trace_token_pool(backend::Backend& be, std::uint64_t seed);

// The words text prompts are made of, each with the ids the server reads it as alone (its chat
// template around it, for kinds that have one), and the template's ids before and after a prompt:
// what every word's reading shares. Throws kvbench::Error where the server gives no token ids (no
// prompt could be checked) or too few words read as a few tokens, one of them as one.
void trace_text_words(backend::Backend& be, std::uint64_t seed,
                      std::vector<TraceSource::Word>& words, std::vector<int>& lead,
                      std::vector<int>& trail);

}  // namespace kvbench::run
