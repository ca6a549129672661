#include "harness/cli/data_files.h"

#include <algorithm>

namespace kvbench::cli {

namespace fs = std::filesystem;

std::vector<fs::path> data_roots() {
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  std::vector<fs::path> out;
  if (!ec) {
    out.push_back(exe_dir.parent_path() / "share" / "kvbench");
    out.push_back(exe_dir.parent_path());
    out.push_back(exe_dir);
  }
  out.emplace_back(KVBENCH_SOURCE_ROOT);
  return out;
}

fs::path find_data_file(const fs::path& relative) {
  std::error_code ec;
  for (const auto& root : data_roots()) {
    if (fs::exists(root / relative, ec)) {
      return root / relative;
    }
  }
  return {};
}

std::string scenario_argument(const std::string& arg) {
  std::error_code ec;
  if (arg.empty() || arg == "-" || fs::exists(arg, ec) || arg.find('/') != std::string::npos) {
    return arg;
  }
  const std::string file = arg.size() > 5 && arg.ends_with(".json") ? arg : arg + ".json";
  const fs::path found = find_data_file(fs::path("scenarios") / file);
  return found.empty() ? arg : found.string();
}

std::vector<std::string> bundled_scenarios() {
  std::vector<std::string> out;
  const fs::path dir = find_data_file("scenarios");
  std::error_code ec;
  if (dir.empty()) {
    return out;
  }
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") {
      out.push_back(e.path().stem().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kvbench::cli
