#pragma once
// Reading members of a server's JSON events that may be missing or of the wrong type.

#include <optional>

#include <nlohmann/json.hpp>

namespace kvbench::backend {

// The member `key` of object `j` when it is an integer in 0..INT_MAX (a token count);
// std::nullopt when `j` is not an object, or the member is absent or anything else.
std::optional<int> json_count(const nlohmann::json& j, const char* key);

// Whether the member `key` of object `j` is a non-empty string.
bool json_has_text(const nlohmann::json& j, const char* key);

}  // namespace kvbench::backend
