#include "harness/backend/json_fields.h"

#include <cmath>
#include <limits>
#include <string>

namespace kvbench::backend {

std::optional<int> json_count(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) {
    return std::nullopt;
  }
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) {
    return std::nullopt;
  }
  const double v = it->get<double>();
  if (!(v >= 0 && v <= std::numeric_limits<int>::max()) || v != std::floor(v)) {
    return std::nullopt;
  }
  return static_cast<int>(v);
}

bool json_has_text(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) {
    return false;
  }
  const auto it = j.find(key);
  return it != j.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

}  // namespace kvbench::backend
