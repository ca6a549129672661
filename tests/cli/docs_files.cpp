#include "docs_files.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

namespace kvbench::docs {

namespace fs = std::filesystem;

std::vector<fs::path> repository_files(const std::string& extension) {
  const fs::path root = KVBENCH_SOURCE_DIR;
  std::vector<fs::path> out;
  const std::string command = "git -C '" + root.string() +
                              "' ls-files --cached --others --exclude-standard '*" + extension +
                              "' 2>/dev/null";
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 4096> line{};
    while (fgets(line.data(), static_cast<int>(line.size()), pipe) != nullptr) {
      std::string name = line.data();
      name.erase(name.find_last_not_of("\r\n") + 1);
      if (!name.empty() && fs::exists(root / name)) {
        out.push_back(root / name);
      }
    }
    pclose(pipe);
  }
  if (!out.empty()) {
    return out;
  }
  const std::regex run_folder("^results/[0-9]");
  for (auto it = fs::recursive_directory_iterator(root); it != fs::end(it); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.starts_with(".") || name.starts_with("build"))) {
      it.disable_recursion_pending();
    } else if (it->path().extension() == extension &&
               !std::regex_search(fs::relative(it->path(), root).string(), run_folder)) {
      out.push_back(it->path());
    }
  }
  return out;
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace kvbench::docs
