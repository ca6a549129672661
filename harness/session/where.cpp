#include "harness/session/where.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"

namespace kvbench::session {

std::string condition_label(const std::map<std::string, std::string>& where) {
  if (where.empty()) {
    return "all calls";
  }
  std::vector<std::string> parts;
  for (const auto& [k, v] : where) {
    parts.push_back(k + "=" + v);
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

bool matches(const CallRecord& r, const std::map<std::string, std::string>& where,
             const std::string& field) {
  for (const auto& [factor, level] : where) {
    if (factor == "cache_type") {
      if (r.cache_type != level) {
        return false;
      }
    } else if (factor == "num_ctx") {
      if (std::to_string(r.num_ctx) != level) {
        return false;
      }
    } else if (factor == "prompt_tokens") {
      if (std::to_string(r.prompt_tokens) != level) {
        return false;
      }
    } else {
      throw InputError(fmt::format(
          "{}: unknown factor '{}': expected num_ctx, cache_type or prompt_tokens", field, factor));
    }
  }
  return true;
}

}  // namespace kvbench::session
