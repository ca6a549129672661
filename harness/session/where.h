#pragma once
// A gated metric's condition ("where": num_ctx, cache_type, prompt_tokens), which the gate and the
// history's sessions both read.

#include <map>
#include <string>

#include "harness/core/record.h"

namespace kvbench::session {

// "cache_type=q8_0,num_ctx=4096", or "all calls" for an empty condition.
std::string condition_label(const std::map<std::string, std::string>& where);

// Whether a call matches a condition on num_ctx, cache_type or prompt_tokens. Throws InputError
// naming `field` for any other factor name.
bool matches(const CallRecord& r, const std::map<std::string, std::string>& where,
             const std::string& field);

}  // namespace kvbench::session
