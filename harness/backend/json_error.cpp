#include "harness/backend/json_error.h"

namespace kvbench::backend {

std::string error_text(const nlohmann::json& e) {
  if (e.is_string()) {
    return e.get<std::string>();
  }
  if (e.is_object() && e.contains("message") && e["message"].is_string()) {
    return e["message"].get<std::string>();
  }
  return e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kvbench::backend
