#pragma once
// The repository's own documents, for the tests that keep them true.

#include <filesystem>
#include <string>
#include <vector>

namespace kvbench::docs {

// The files of the repository that end in `extension` (".md"): what git tracks or would track
// (not ignored); without git (a copy of the repository), every such file outside build and dot
// folders and outside the run folders under results/.
std::vector<std::filesystem::path> repository_files(const std::string& extension);

// The whole text of `path`.
std::string file_text(const std::filesystem::path& path);

}  // namespace kvbench::docs
