// Every repository path a Markdown file of the repository names, in backticks, in a code block or
// in plain text, exists; so does every Markdown file it cites by its bare name.
//
// A repository path is a word that starts with one of the repository's top-level folders
// (harness/, scripts/, scenarios/, tests/, results/, docs/, .ci/), or with ../ before one, and
// names a file or folder from the repository's root or from the folder of the file that names it
// (harness/README.md's results/manifest.h is harness/results/manifest.h). Exempt, by this rule:
// what a run or a build makes and the repository does not hold. A placeholder (`results/<run>`,
// `RUN_DIR`, `$w`, `*`, `...`, `{png,svg}`), a run's folder under results/ (its name starts with a
// digit: the date), every path under build*/ or .deps/ (not a top-level folder above), and the
// Markdown files kvbench writes into a run's folder (report.md, gate.md, capacity.md,
// lesson-report.md) and the Slurm recipe's merge job beside the runs (merged.md). The recorded runs
// under tests/data/ quote paths of the machines they ran on and are not read.

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "docs_files.h"

namespace kvbench::docs_paths {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = KVBENCH_SOURCE_DIR;

// The repository's Markdown files, by their names from its root.
std::vector<std::string> markdown_names() {
  std::vector<std::string> out;
  for (const auto& p : docs::repository_files(".md")) {
    out.push_back(fs::relative(p, kRoot).string());
  }
  return out;
}

// Whether `path` (as written) is a placeholder or something a run or build makes.
bool exempt(const std::string& path) {
  static const std::regex placeholder(R"([<>*{}$]|\.\.\.|(^|/)[A-Z][A-Z0-9_]*[A-Z0-9](/|$))");
  static const std::regex run_folder(R"(^(\.\./)*results/[0-9])");
  return std::regex_search(path, placeholder) || std::regex_search(path, run_folder);
}

// The repository paths named in `text`: each with its trailing punctuation taken off.
std::vector<std::string> paths_named(const std::string& text) {
  static const std::regex named(
      R"((?:^|[\s`(\['"=:,])((?:\.\./)*(?:harness|scripts|scenarios|tests|results|docs|\.ci)/[A-Za-z0-9_./<>*{}$,-]*))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), named), end; it != end; ++it) {
    std::string p = (*it)[1].str();
    while (!p.empty() && std::string_view(".,:;").find(p.back()) != std::string_view::npos) {
      p.pop_back();
    }
    out.push_back(p);
  }
  return out;
}

// The Markdown files cited by a bare name (`statistics.md`) in `text`.
std::vector<std::string> markdown_cited(const std::string& text) {
  static const std::regex cited(R"((?:^|[\s`(\['"])([A-Za-z0-9_-]+\.md)\b)");
  std::vector<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), cited), end; it != end; ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

TEST(DocsPaths, EveryRepositoryPathNamedExists) {
  int checked = 0;
  for (const auto& name : markdown_names()) {
    if (name.starts_with("tests/data/")) {
      continue;
    }
    const fs::path file = kRoot / name;
    for (const auto& p : paths_named(docs::file_text(file))) {
      if (exempt(p)) {
        continue;
      }
      ++checked;
      EXPECT_TRUE(fs::exists(kRoot / p) || fs::exists(file.parent_path() / p))
          << name << " names " << p << ", which is not in the repository";
    }
  }
  EXPECT_GT(checked, 100) << "the Markdown files name the repository's files";
}

TEST(DocsPaths, EveryMarkdownFileCitedByNameExists) {
  std::set<std::string> names = {"report.md", "gate.md", "capacity.md", "lesson-report.md",
                                 "merged.md"};
  for (const auto& name : markdown_names()) {
    names.insert(fs::path(name).filename().string());
  }
  int checked = 0;
  for (const auto& name : markdown_names()) {
    if (name.starts_with("tests/data/")) {
      continue;
    }
    for (const auto& cited : markdown_cited(docs::file_text(kRoot / name))) {
      ++checked;
      EXPECT_TRUE(names.contains(cited))
          << name << " cites " << cited << ", and no Markdown file of that name is in the "
          << "repository";
    }
  }
  EXPECT_GT(checked, 10);
}

TEST(DocsPaths, TheRuleTellsPathsFromPlaceholders) {
  EXPECT_EQ(paths_named("see `scripts/setup-deps.sh`, and (../tests/README.md)."),
            (std::vector<std::string>{"scripts/setup-deps.sh", "../tests/README.md"}));
  EXPECT_EQ(paths_named("kvbench report results/<run> -o x"),
            std::vector<std::string>{"results/<run>"});
  EXPECT_TRUE(exempt("results/<run>"));
  EXPECT_TRUE(exempt("results/20261206-045417-quickstart"));
  EXPECT_TRUE(exempt("results/RUN_DIR/plots"));
  EXPECT_TRUE(exempt("scenarios/*.json"));
  EXPECT_FALSE(exempt("results/README.md"));
  EXPECT_FALSE(exempt("scenarios/lesson/figures.json"));
  EXPECT_EQ(markdown_cited("as statistics.md §5.4 says, and `README.md`"),
            (std::vector<std::string>{"statistics.md", "README.md"}));
  EXPECT_TRUE(paths_named("no path: buildscripts/x, harness").empty());
}

}  // namespace
}  // namespace kvbench::docs_paths
