#include "harness/core/error.h"

namespace kvbench {
namespace {
std::string join_lines(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) {
      out += '\n';
    }
    out += p;
  }
  return out;
}
}  // namespace

InputError::InputError(const std::vector<std::string>& problems) : Error(join_lines(problems), 2) {}

}  // namespace kvbench
