#include "harness/core/describe.h"

namespace kvbench::describe {

namespace detail {

nlohmann::json::json_pointer pointer(const std::string& path) {
  std::string out;
  std::size_t from = 0;
  while (true) {
    const auto dot = path.find('.', from);
    out += "/" + path.substr(from, dot - from);
    if (dot == std::string::npos) {
      return nlohmann::json::json_pointer(out);
    }
    from = dot + 1;
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& x : items) {
    out += (out.empty() ? "" : ";") + x;
  }
  return out;
}

}  // namespace detail

namespace {

// The object schema at `keys` under `root`, made where missing.
nlohmann::json& object_at(nlohmann::json& root, const std::vector<std::string>& keys) {
  nlohmann::json* at = &root;
  for (const auto& k : keys) {
    nlohmann::json& next = (*at)["properties"][k];
    if (!next.contains("type")) {
      next["type"] = "object";
    }
    at = &next;
  }
  return *at;
}

}  // namespace

nlohmann::json schema(const std::vector<const FieldInfo*>& fields) {
  nlohmann::json root = {{"type", "object"}};
  for (const auto* f : fields) {
    std::vector<std::string> keys;
    std::size_t from = 0;
    while (true) {
      const auto dot = f->path.find('.', from);
      keys.push_back(f->path.substr(from, dot - from));
      if (dot == std::string::npos) {
        break;
      }
      from = dot + 1;
    }
    const std::string key = keys.back();
    keys.pop_back();
    nlohmann::json& parent = object_at(root, keys);
    nlohmann::json& node = parent["properties"][key];
    for (const auto& [k, v] : f->schema.items()) {
      node[k] = v;
    }
    if (f->required) {
      parent["required"].push_back(key);
    }
  }
  return root;
}

}  // namespace kvbench::describe
