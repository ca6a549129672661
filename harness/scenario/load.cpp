// A scenario file read, by path or from standard input (-): at most 1 MiB, its text checked for
// valid UTF-8 before it is parsed.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"
#include "harness/core/utf8.h"
#include "harness/scenario/edits.h"
#include "harness/scenario/scenario.h"

namespace kvbench::scenario {

namespace {

std::string source_name(const std::string& path) {
  return path == "-" ? "standard input" : path;
}

}  // namespace

std::string read_scenario_text(const std::string& path) {
  constexpr std::uintmax_t kMaxBytes = 1 << 20;  // a scenario is at most 1 MiB
  std::string text;
  if (path == "-") {
    text.resize(kMaxBytes + 1);
    std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(std::cin.gcount()));
  } else {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st)) {
      throw InputError(fmt::format("{}: cannot read the scenario file (no such file)", path));
    }
    if (!std::filesystem::is_regular_file(st)) {
      throw InputError(fmt::format(
          "{}: not a regular file (a folder, FIFO or device): give a scenario file, or - for "
          "standard input",
          path));
    }
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxBytes) {
      throw InputError(fmt::format("{}: {} bytes: a scenario file is at most 1 MiB (1048576 bytes)",
                                   path, size));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      throw InputError(fmt::format("{}: cannot read the scenario file", path));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  if (text.size() > kMaxBytes) {
    throw InputError(fmt::format("{}: more than 1 MiB (1048576 bytes): a scenario is at most that",
                                 path == "-" ? "standard input" : path));
  }
  if (valid_utf8(text) != text) {
    std::size_t bad = 0;
    const std::string fixed = valid_utf8(text);
    while (bad < text.size() && bad < fixed.size() && text[bad] == fixed[bad]) {
      ++bad;
    }
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n');
    throw InputError(fmt::format("{}: line {}: not valid UTF-8 (byte {}): save the file as UTF-8",
                                 path == "-" ? "standard input" : path, line, bad));
  }
  return text;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(read_scenario_text(path), source_name(path));
}

Scenario load_scenario(const std::string& path, const ScenarioEdits& edits) {
  if (!edits.any()) {
    return load_scenario(path);
  }
  const std::string source = source_name(path);
  auto doc = parse_scenario_json(read_scenario_text(path), source);
  try {
    doc = apply_edits(std::move(doc), edits);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
  // No line numbers: the edited scenario is no longer the file's text.
  return parse_scenario(doc, "", fmt::format("{} with {}", source, fmt::join(edits.flags(), ", ")));
}

}  // namespace kvbench::scenario
