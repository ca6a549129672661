#pragma once
// Optional fields of kvbench's JSON records (calls, run.json's typed parts, the log's memory): read
// as absent when missing or null; written only when present (put_optional), or as null (or_null).

#include <optional>

#include <nlohmann/json.hpp>

namespace kvbench {

template <typename T>
std::optional<T> optional_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && !it->is_null() ? std::optional<T>(it->get<T>()) : std::nullopt;
}

// The value, or null.
template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <typename T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) {
    j[key] = *v;
  }
}

}  // namespace kvbench
