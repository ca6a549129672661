#pragma once
// A KV-cache setting's two halves. A level of a scenario's cache_type (and a record's) names both
// ("q8_0") or, where they differ, K and V apart ("q8_0/f16": q8_0 keys, f16 values), as
// llama-server's -ctk and -ctv take them. Pure.

#include <string>

namespace kvbench {

struct CacheHalves {
  std::string k;
  std::string v;
  bool split() const { return k != v; }
};

inline CacheHalves cache_halves(const std::string& level) {
  const auto slash = level.find('/');
  if (slash == std::string::npos) {
    return {level, level};
  }
  return {level.substr(0, slash), level.substr(slash + 1)};
}

inline std::string cache_level(const std::string& k, const std::string& v) {
  return k == v ? k : k + "/" + v;
}

}  // namespace kvbench
