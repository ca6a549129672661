#include "harness/scenario/llama_defaults.h"

namespace kvbench::scenario::llama {

std::optional<std::string> flag_value(const std::vector<std::string>& argv, Flag flag) {
  std::optional<std::string> v;
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag.name || (!flag.alias.empty() && argv[i] == flag.alias)) {
      v = argv[i + 1];
    }
  }
  return v;
}

}  // namespace kvbench::scenario::llama
