// The bad-scenario corpus: every file in tests/data/bad-scenarios/ starts with a line
// "// expect: <text>"; kvbench must refuse it with exit code 2, a message containing that text
// and the file's name, start no server and create no results folder.

#include <sys/stat.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/harness.h"

namespace kvbench::itest {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus() {
  std::vector<fs::path> files;
  for (const auto& e :
       fs::directory_iterator(fs::path(KVBENCH_SOURCE_DIR) / "tests/data/bad-scenarios")) {
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string expectation(const fs::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  const std::string tag = "// expect: ";
  EXPECT_EQ(first.rfind(tag, 0), 0U) << file << " has no expectation line";
  return first.substr(std::min(first.size(), tag.size()));
}

TEST(BadInput, CorpusHasAtLeastFiftyFiles) {
  EXPECT_GE(corpus().size(), 50U);
}

TEST(BadInput, EveryBadScenarioExitsTwoWithItsMessageAndWritesNothing) {
  const fs::path dir = fresh_dir("bad-input");
  for (const auto& file : corpus()) {
    const fs::path results = dir / file.stem();
    const auto r = run_kvbench({"run", file.string(), "--results", results.string()}, 60);
    EXPECT_EQ(r.exit_code, 2) << file.filename() << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr(expectation(file))) << file.filename();
    EXPECT_THAT(r.err, ::testing::HasSubstr(file.filename().string())) << file.filename();
    EXPECT_FALSE(fs::exists(results)) << file.filename() << " created a results folder";
    EXPECT_TRUE(r.out.empty()) << file.filename();
    // A secret planted in a URL (a password, a query key) is never echoed.
    EXPECT_EQ(r.err.find("planted"), std::string::npos) << file.filename() << ": " << r.err;
  }
}

// A scenario is read only from a regular file of at most 1 MiB (or - for standard input): a FIFO
// or a folder is refused at once instead of read forever.
TEST(BadInput, OnlyARegularFileOfBoundedSizeIsRead) {
  const fs::path dir = fresh_dir("bad-file");
  const fs::path fifo = dir / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path big = dir / "big.json";
  {
    std::ofstream out(big);
    out << R"({"name": "x", "description": ")" << std::string(1100000, 'a')
        << R"(", "factors": {"prompt_tokens": [64]}})";
  }
  for (const auto& [file, expected] : std::vector<std::pair<fs::path, std::string>>{
           {fifo, "not a regular file (a folder, FIFO or device)"},
           {dir, "not a regular file"},
           {big, "a scenario file is at most 1 MiB"},
           {dir / "none.json", "cannot read the scenario file (no such file)"}}) {
    const auto r = run_kvbench({"run", file.string(), "--results", (dir / "runs").string()}, 30);
    EXPECT_EQ(r.exit_code, 2) << file << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr(expected)) << file;
    EXPECT_FALSE(fs::exists(dir / "runs"));
  }
}

// A --url with credentials is refused before anything starts, and never echoed.
TEST(BadInput, UrlWithCredentialsOnTheCommandLineIsRefusedUnseen) {
  const fs::path dir = fresh_dir("bad-url");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "x",
    "server": {"kind": "openai"}, "factors": {"prompt_tokens": [64]}})");
  for (const std::string url :
       {"http://kvbench:pw-planted@127.0.0.1:9/v1", "ftp://u:pw-planted@127.0.0.1/v1"}) {
    const auto r =
        run_kvbench({"run", scenario, "--url", url, "--results", (dir / "runs").string()}, 60);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr("--url: a URL with credentials in it"));
    EXPECT_EQ(r.err.find("pw-planted"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("pw-planted"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir / "runs"));
  }
}

// --url makes a managed openai scenario an attached one, which runs the model each request names:
// without server.model or --model it is refused before anything is contacted, and --model
// mends it.
TEST(BadInput, AnUrlOverrideThatLeavesTheModelUnnamedIsRefused) {
  const fs::path dir = fresh_dir("bad-url-model");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "x",
    "server": {"kind": "openai"}, "factors": {"prompt_tokens": [64]}})");
  const auto r = run_kvbench(
      {"run", scenario, "--url", "http://127.0.0.1:9/v1", "--results", (dir / "runs").string()},
      60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(
                         "s.json: server.model: an attached 'openai' server runs the model each "
                         "request names: give the name of one it has (as its /v1/models lists)"));
  EXPECT_FALSE(fs::exists(dir / "runs"));
  // With --model it passes the checks and fails at the server, which is not there (exit 1).
  const auto named = run_kvbench({"run", scenario, "--url", "http://127.0.0.1:9/v1", "--model",
                                  "some-model", "--results", (dir / "runs").string()},
                                 60);
  EXPECT_NE(named.exit_code, 2) << named.err;
  EXPECT_EQ(named.err.find("server.model"), std::string::npos) << named.err;
}

// A results folder that cannot be written is refused (exit 2) by every command that writes one,
// after its own input checks and before any server starts: the stand-in server leaves a mark
// when it is started, and none appears.
TEST(BadInput, AResultsFolderThatCannotBeWrittenIsRefusedBeforeAnythingStarts) {
  const fs::path dir = fresh_dir("unwritable");
  const fs::path mark = dir / "server-started";
  const fs::path fake = dir / "fake-server";
  std::ofstream(fake) << "#!/bin/sh\ntouch '" << mark.string() << "'\nexec sleep 30\n";
  fs::permissions(fake, fs::perms::owner_all);
  const std::string run_s = write_file(dir, "run.json", R"({"name": "x",
    "server": {"model": "synthetic:tiny"}, "factors": {"prompt_tokens": [64]}})");
  const std::string gate_s = write_file(dir, "gate.json", R"({"name": "g",
    "server": {"model": "synthetic:tiny"}, "factors": {"prompt_tokens": [64]},
    "variants": [{"name": "a"}, {"name": "b"}]})");
  const fs::path a_file = dir / "a-file";
  std::ofstream(a_file) << "not a folder\n";
  std::vector<std::string> targets = {(a_file / "runs").string()};
  // A read-only mount where this test may make one (root): permissions alone do not stop root.
  const fs::path ro = dir / "read-only";
  fs::create_directories(ro);
  const auto mount =
      process::run_capture({"mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", ro.string()},
                           std::chrono::seconds(10));
  const bool mounted = mount.status && mount.status->code == 0;
  if (mounted) {
    targets.push_back((ro / "runs").string());
  }
  for (const auto& target : targets) {
    SCOPED_TRACE(target);
    const std::vector<std::vector<std::string>> commands = {
        {"run", run_s},
        {"gate", gate_s},
        {"capacity", "--model", "synthetic:tiny", "--ctx", "1024"},
        {"reproduce", "lesson", "--quick", "--no-plots", "--only", "prompt-length"}};
    for (auto args : commands) {
      SCOPED_TRACE(args[0]);
      for (const auto& extra : {"--results", target.c_str(), "--server-bin", fake.c_str(), "-q"}) {
        args.emplace_back(extra);
      }
      const auto r = run_kvbench(args, 60);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_THAT(r.err, ::testing::HasSubstr("--results " + target + ": "));
      EXPECT_THAT(r.err, ::testing::AnyOf(::testing::HasSubstr("is not a folder"),
                                          ::testing::HasSubstr("not writable")));
      EXPECT_FALSE(fs::exists(mark)) << "a server was started";
    }
  }
  if (mounted) {
    const auto umount = process::run_capture({"umount", ro.string()}, std::chrono::seconds(10));
    EXPECT_TRUE(umount.status && umount.status->code == 0) << umount.stderr_text;
  }
}

TEST(BadInput, ALabelThatIsNotNameEqualsValueIsRefusedBeforeAnythingStarts) {
  const fs::path dir = fresh_dir("bad-label");
  const std::string scenario = write_file(dir, "s.json", R"({"name": "x",
    "server": {"model": "synthetic:tiny"}, "factors": {"prompt_tokens": [64]}})");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"no-equals", "expected NAME=VALUE"}, {"=v", "the name must be"},
      {"bad name=v", "the name must be"},   {"k=", "the value must be"},
      {"k=   ", "the value must be"},       {"k=a, b", "the value must not hold ', '"}};
  for (const auto& [label, why] : cases) {
    const auto r = run_kvbench(
        {"run", scenario, "--label", label, "--results", (dir / "runs").string(), "-q"}, 60);
    EXPECT_EQ(r.exit_code, 2) << label << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr("--label '" + label + "': " + why)) << label;
  }
  const auto twice = run_kvbench({"run", scenario, "--label", "k=a", "--label", "k=b", "--results",
                                  (dir / "runs").string(), "-q"},
                                 60);
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, ::testing::HasSubstr("--label k: given twice"));
  EXPECT_FALSE(fs::exists(dir / "runs"));
}

TEST(BadInput, PlanRefusesTheSameFiles) {
  for (const auto& file : corpus()) {
    const std::string name = file.filename().string();
    if (name.find("preset") != std::string::npos ||
        name.find("missing.json") != std::string::npos ||
        name.find("api-key") != std::string::npos || name.find("head-size") != std::string::npos) {
      continue;  // these are found when a run resolves its server and model, not by the parser
    }
    const auto r = run_kvbench({"plan", file.string()}, 60);
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::HasSubstr(expectation(file))) << name;
  }
}

}  // namespace
}  // namespace kvbench::itest
