#include "harness/servers/server_binary.h"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/process/child.h"

namespace kvbench::servers {

std::string find_server_binary(const ServerBinary& b, const std::string& explicit_path) {
  if (!explicit_path.empty()) {
    if (auto p = process::find_on_path(explicit_path)) {
      return p->string();
    }
    throw InputError(fmt::format("{}: {} binary '{}' does not exist or is not executable", b.field,
                                 b.name, explicit_path));
  }
  std::vector<std::string> tried;
  if (const char* env = std::getenv(b.env.c_str()); env != nullptr && *env != '\0') {
    if (auto p = process::find_on_path(env)) {
      return p->string();
    }
    throw InputError(fmt::format("${}={} is not an executable file", b.env, env));
  }
  tried.push_back(fmt::format("${} (not set)", b.env));
  for (const auto& p : b.places) {
    if (::access(p.c_str(), X_OK) == 0) {
      return p.string();
    }
  }
  if (!b.places_text.empty()) {
    tried.push_back(b.places_text);
  }
  if (auto p = process::find_on_path(b.name)) {
    return p->string();
  }
  tried.push_back(fmt::format("{} on PATH", b.name));
  throw InputError(
      fmt::format("no {} found (tried {}); {}", b.name, fmt::join(tried, ", "), b.hint));
}

}  // namespace kvbench::servers
