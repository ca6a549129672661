// The documentation kept true: every relative link in every Markdown file of the repository
// resolves; every `kvbench ...` command in a code block of those files, and every example in
// --help, parses with the real command line (an unknown flag fails, as it would for a user: the
// commands are parsed, not run); every scenario file they name exists and validates.

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "docs_files.h"
#include "harness/cli/app.h"
#include "harness/core/error.h"
#include "harness/scenario/scenario.h"

namespace kvbench::cli {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = KVBENCH_SOURCE_DIR;

using docs::file_text;

std::vector<fs::path> markdown_files() {
  return docs::repository_files(".md");
}

// The text of a Markdown file outside its code (fenced blocks and `inline` spans).
std::string prose_of(const std::string& md) {
  std::istringstream in(md);
  std::string line;
  std::string out;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (line.find("```") != std::string::npos && line.find_first_not_of(' ') == line.find("```")) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) {
      out += std::regex_replace(line, std::regex("`[^`]*`"), "") + "\n";
    }
  }
  return out;
}

// The lines of a Markdown file's fenced code blocks, a trailing backslash joining the next.
std::vector<std::string> code_lines(const std::string& md) {
  std::istringstream in(md);
  std::string line;
  std::vector<std::string> out;
  bool fenced = false;
  std::string pending;
  while (std::getline(in, line)) {
    if (line.find("```") != std::string::npos && line.find_first_not_of(' ') == line.find("```")) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) {
      continue;
    }
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    out.push_back(pending + line);
    pending.clear();
  }
  return out;
}

// The kvbench commands of a shell line: each command of it (split at && || ; |) whose program is
// kvbench (or a path to it), without the program and without redirections, its shell variables
// 1; a comment dropped.
std::vector<std::string> kvbench_commands(const std::string& shell) {
  std::vector<std::string> out;
  std::string line = shell.substr(0, shell.find(" #"));
  if (line.starts_with("#")) {
    return out;
  }
  const std::regex split(R"(\s*(?:&&|\|\||;|\|)\s*)");
  for (std::sregex_token_iterator it(line.begin(), line.end(), split, -1), end; it != end; ++it) {
    std::string cmd = it->str();
    const std::regex program(
        R"(^\s*(?:\$\s+)?(?:(?:do|then|else|time)\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:sudo\s+)?(?:\S*/)?kvbench(?:\s+|$))");
    std::smatch m;
    if (!std::regex_search(cmd, m, program)) {
      continue;
    }
    // A shell variable's value is not known here: any word parses where a word is expected,
    // and a number where a number is.
    cmd =
        std::regex_replace(m.suffix().str(), std::regex(R"(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)"), "1");
    const auto redirect = cmd.find_first_of("><");
    if (redirect != std::string::npos) {
      // "results/<run>" is a placeholder, not a redirection: only a redirection after a space.
      const std::regex redirection(R"(\s(?:\d?>>?|<)\s*\S+.*$)");
      cmd = std::regex_replace(cmd, redirection, "");
    }
    out.push_back(cmd);
  }
  return out;
}

// Why `args` does not parse as a kvbench command line; empty when it does.
std::string parse_problem(const std::string& args) {
  CLI::App app{"", "kvbench"};
  int exit_code = 0;
  setup_app(app, exit_code);
  disarm(app);
  try {
    app.parse(args, false);
    return "parsing ran the command";
  } catch (const CheckedOnly&) {
    return "";
  } catch (const CLI::CallForHelp&) {
    return "";
  } catch (const CLI::CallForAllHelp&) {
    return "";
  } catch (const CLI::CallForVersion&) {
    return "";
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(Docs, EveryRelativeLinkResolves) {
  const std::regex link(R"(\]\(([^)\s]+)(?:\s+"[^"]*")?\))");
  int checked = 0;
  for (const auto& file : markdown_files()) {
    const std::string prose = prose_of(file_text(file));
    for (std::sregex_iterator it(prose.begin(), prose.end(), link), end; it != end; ++it) {
      std::string target = (*it)[1].str();
      if (target.find("://") != std::string::npos || target.starts_with("mailto:") ||
          target.starts_with("#")) {
        continue;
      }
      target = target.substr(0, target.find('#'));
      ++checked;
      EXPECT_TRUE(fs::exists(file.parent_path() / target))
          << fs::relative(file, kRoot).string() << ": the link to " << target << " leads nowhere";
    }
  }
  EXPECT_GT(checked, 50) << "the Markdown files link to each other";
}

TEST(Docs, EveryKvbenchCommandInACodeBlockParses) {
  int checked = 0;
  for (const auto& file : markdown_files()) {
    if (file.string().find("/tests/data/") != std::string::npos) {
      continue;  // recorded runs' reports, not documentation
    }
    for (const auto& line : code_lines(file_text(file))) {
      for (const auto& cmd : kvbench_commands(line)) {
        ++checked;
        EXPECT_EQ(parse_problem(cmd), "")
            << fs::relative(file, kRoot).string() << ": kvbench " << cmd;
      }
    }
  }
  EXPECT_GT(checked, 20) << "the documentation shows kvbench commands";
}

TEST(Docs, EveryHelpExampleParses) {
  CLI::App app{"", "kvbench"};
  int exit_code = 0;
  setup_app(app, exit_code);
  const auto examples = help_examples(app);
  EXPECT_GE(examples.size(), 5U);
  for (const auto& example : examples) {
    ASSERT_TRUE(example.starts_with("kvbench "));
    EXPECT_EQ(parse_problem(example.substr(8)), "") << example;
  }
}

TEST(Docs, AnUnknownFlagIsCaught) {
  // What the two tests above rest on: the parser refuses what kvbench does not know.
  EXPECT_NE(parse_problem("run quickstart --no-such-flag"), "");
  EXPECT_NE(parse_problem("report results/x --format pdf"), "");
  EXPECT_NE(parse_problem("no-such-command"), "");
  EXPECT_EQ(parse_problem("run quickstart --detail"), "");
  EXPECT_EQ(parse_problem("report results/x --format html -o page.html"), "");
  EXPECT_EQ(kvbench_commands("cd x && build/kvbench run s.json > out.md 2>&1 # note"),
            std::vector<std::string>{"run s.json"});
  EXPECT_EQ(kvbench_commands("kvbench report results/<run> --format json"),
            std::vector<std::string>{"report results/<run> --format json"});
  EXPECT_EQ(kvbench_commands("for w in 1 2; do kvbench trace synth --working-set $w; done"),
            std::vector<std::string>{"trace synth --working-set 1"});
}

TEST(Docs, EveryScenarioFileNamedExistsAndValidates) {
  const std::regex named(R"((?:^|[\s(`'"])((?:\.\./)?scenarios/[A-Za-z0-9_./-]+\.json))");
  std::set<fs::path> scenarios;
  for (const auto& file : markdown_files()) {
    if (file.string().find("/tests/data/") != std::string::npos) {
      continue;
    }
    const std::string text = file_text(file);
    for (std::sregex_iterator it(text.begin(), text.end(), named), end; it != end; ++it) {
      const std::string name = (*it)[1].str();
      const fs::path at = name.starts_with("../") ? file.parent_path() / name : kRoot / name;
      EXPECT_TRUE(fs::exists(at)) << fs::relative(file, kRoot).string() << " names " << name;
      if (fs::exists(at)) {
        scenarios.insert(fs::weakly_canonical(at));
      }
    }
  }
  // The scenario folder's own README names its files by their plain names.
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / "scenarios")) {
    if (entry.path().extension() == ".json" &&
        file_text(kRoot / "scenarios/README.md").find(entry.path().filename().string()) !=
            std::string::npos) {
      scenarios.insert(fs::weakly_canonical(entry.path()));
    }
  }
  EXPECT_GE(scenarios.size(), 5U);
  for (const auto& s : scenarios) {
    if (s.parent_path().filename() == "lesson" &&
        (s.filename() == "figures.json" || s.filename() == "quick.json")) {
      continue;  // the lesson's published figures and its --quick patch, not scenarios
    }
    try {
      scenario::load_scenario(s.string());
    } catch (const Error& e) {
      ADD_FAILURE() << s.string() << " does not validate: " << e.what();
    }
  }
}

}  // namespace
}  // namespace kvbench::cli
