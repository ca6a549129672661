#pragma once
// The message of an error a server sent inside a JSON stream event.

#include <string>

#include <nlohmann/json.hpp>

namespace kvbench::backend {

// A string as it is; an object's "message" string; anything else as compact JSON.
std::string error_text(const nlohmann::json& error);

}  // namespace kvbench::backend
