#pragma once
// What kvbench starts a managed llama-server with unless server.args says otherwise, llama-server's
// own defaults that kvbench relies on, and the flags that set each: every one stated here once.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::scenario::llama {

// A llama-server flag by its long name and its short one (empty when it has none).
struct Flag {
  std::string_view name;
  std::string_view alias;
};

inline constexpr Flag kCacheReuseFlag{"--cache-reuse", ""};
inline constexpr Flag kCacheRamFlag{"--cache-ram", "-cram"};
inline constexpr Flag kSimilarityFlag{"--slot-prompt-similarity", "-sps"};

// --cache-reuse: kvbench's own setting. Cold means cold: no chunk reuse by KV shifting after an
// edit (it breaks the 1 - f cost of an edit at f).
inline constexpr int kCacheReuse = 0;
// --cache-ram in MiB: llama-server's default host-RAM prompt cache, which kvbench states on every
// managed server's command line rather than assume.
inline constexpr long long kCacheRamMib = 8192;
// --slot-prompt-similarity: llama-server's default, which kvbench leaves as it is.
inline constexpr double kSlotPromptSimilarity = 0.1;

// The value of `flag`'s last occurrence in `argv` (as llama-server parses it, the last wins, so
// server.args may override what kvbench sets before them); std::nullopt when absent.
std::optional<std::string> flag_value(const std::vector<std::string>& argv, Flag flag);

}  // namespace kvbench::scenario::llama
