// The README's recipes run as written against the real llama-server: each command is read from
// the Markdown file that shows it, its placeholders (the user's model file, the user's server's
// URL) are given real values, and kvbench runs it with only `--results` added. A recipe that
// changes in the README is the one that runs here.

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The text of `file`, a file of the repository.
std::string source_text(const std::string& file) {
  std::ifstream in(fs::path(KVBENCH_SOURCE_DIR) / file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first command in `file` (a Markdown file of the repository) that starts with `start`, in a
// backtick span or a code block; fails the test when none does.
std::string recipe(const std::string& file, const std::string& start) {
  const std::string md = source_text(file);
  const auto at = md.find(start);
  if (at == std::string::npos) {
    ADD_FAILURE() << file << " shows no command starting with '" << start << "'";
    return "";
  }
  return md.substr(at, md.find_first_of("`\n", at) - at);
}

// `command` split at spaces (the recipes quote nothing), `from` words replaced by `to`, the
// leading `kvbench` dropped.
std::vector<std::string> words(const std::string& command,
                               const std::vector<std::pair<std::string, std::string>>& values) {
  std::istringstream in(command);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) {
    for (const auto& [from, to] : values) {
      if (w == from) {
        w = to;
      }
    }
    out.push_back(w);
  }
  if (!out.empty() && out.front() == "kvbench") {
    out.erase(out.begin());
  }
  return out;
}

KvbenchResult run_recipe(std::vector<std::string> args, const fs::path& results) {
  args.insert(args.end(), {"--results", results.string()});
  return run_kvbench(args);
}

TEST(ReadmeRecipes, YourOwnGgufFile) {
  const fs::path dir = fresh_dir("recipe-gguf");
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "mine.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const std::string command =
      recipe("README.md", "kvbench run --model ~/models/my-model.gguf --prompt");
  const auto r = run_recipe(
      words(command, {{"~/models/my-model.gguf", (dir / "mine.gguf").string()}}), dir / "runs");
  ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  EXPECT_THAT(r.out, HasSubstr("What kvbench found"));
  const auto run = read_json(only_run_dir(dir / "runs") / "run.json");
  EXPECT_EQ(run["scenario"]["server"]["model"], (dir / "mine.gguf").string());
}

// Every `kvbench run` recipe of the README that needs no server of the user's is planned as written
// (`plan` checks the same flags and files as `run`, and starts nothing), with synthetic models for
// the user's files: a recipe whose prompts do not fit its window fails here, not on first use.
TEST(ReadmeRecipes, EveryRunRecipePlansAsWritten) {
  const fs::path dir = fresh_dir("recipe-plans");
  std::vector<std::pair<std::string, std::string>> values;
  for (const std::string name : {"my-model", "a", "b"}) {
    const fs::path file = dir / (name + ".gguf");
    const auto synth = run_kvbench({"model", "synth", "--preset", "tiny", "-o", file.string()});
    ASSERT_EQ(synth.exit_code, 0) << synth.err;
    values.emplace_back("~/models/" + name + ".gguf", file.string());
  }
  const std::string md = source_text("README.md");
  int planned = 0;
  for (auto at = md.find("`kvbench run "); at != std::string::npos;
       at = md.find("`kvbench run ", at + 1)) {
    const std::string command = md.substr(at + 1, md.find('`', at + 1) - at - 1);
    if (command.find("--url") != std::string::npos) {
      continue;  // the user's own server: AServerYouStartedYourself runs one
    }
    auto args = words(command, values);
    // A placeholder (SCENARIO, results/<run>) is the user's to fill in.
    if (std::any_of(args.begin(), args.end(), [](const std::string& w) {
          return w.find('<') != std::string::npos ||
                 std::all_of(w.begin(), w.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
        })) {
      continue;
    }
    args[0] = "plan";
    // A history widens a run's intervals once it has run; a plan has none.
    if (const auto h = std::find(args.begin(), args.end(), "--history"); h != args.end()) {
      args.erase(h, h + 2);
    }
    for (auto& a : args) {
      if (a.starts_with("scenarios/")) {
        a = (fs::path(KVBENCH_SOURCE_DIR) / a).string();
      }
    }
    const auto r = run_kvbench(args);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    ++planned;
  }
  EXPECT_GE(planned, 8) << "the README's run recipes were not found";
}

TEST(ReadmeRecipes, AServerYouStartedYourself) {
  const fs::path dir = fresh_dir("recipe-url");
  const auto synth =
      run_kvbench({"model", "synth", "--preset", "tiny", "-o", (dir / "tiny.gguf").string()});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const int port = 23000 + static_cast<int>(::getpid() % 2000);
  auto server = serve_by_hand(dir / "tiny.gguf", port, dir / "server.log", 0, 4096);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  ASSERT_TRUE(answers_soon(url + "/health", {}, 200));
  const std::string command =
      recipe("README.md", "kvbench run --url http://127.0.0.1:8080 --prompt");
  const auto r = run_recipe(words(command, {{"http://127.0.0.1:8080", url}}), dir / "runs");
  server.stop(std::chrono::milliseconds(3000));
  ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  EXPECT_THAT(r.out + r.err, HasSubstr("found llama-server at " + url));
}

TEST(ReadmeRecipes, TheTraceAnalysisOfTheRepositorysTrace) {
  const std::string command = recipe("scenarios/README.md", "kvbench trace analyze tests/");
  auto args = words(command, {});
  // Paths in the recipe are the source tree's.
  args[2] = (fs::path(KVBENCH_SOURCE_DIR) / args[2]).string();
  const auto r = run_kvbench(args);
  ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  // The figures the recipe shows beside it.
  EXPECT_THAT(r.out, HasSubstr("| by blocks        | 36.6 % |"));
  EXPECT_THAT(r.out, HasSubstr("|            20,000 |        10,240,000 |    28.8 % |"));
}

}  // namespace
}  // namespace kvbench::itest
