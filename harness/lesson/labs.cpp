#include "harness/lesson/labs.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "harness/analysis/lesson_figures.h"
#include "harness/core/error.h"
#include "harness/lesson/lesson_files.h"

namespace kvbench::lesson {

namespace {
nlohmann::json parse_file(const std::string& name) {
  const auto text = lesson_file(name);
  if (text.empty()) {
    throw Error(fmt::format("scenarios/lesson/{}: not compiled in", name));
  }
  try {
    return nlohmann::json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("scenarios/lesson/{}: not valid JSON: {}", name, e.what()));
  }
}
}  // namespace

const std::vector<Lab>& labs() {
  static const std::vector<Lab> kLabs = {
      {"prompt-length", "Prompt length: time to first token and decode rate"},
      {"context-window", "Context window: memory against num_ctx"},
      {"cache-type", "Cache type: f16 against q8_0"},
      {"prefix-reuse", "Prefix reuse: where the prompt changes"},
      {"repeated-prompt", "The repeated-prompt trap"},
  };
  return kLabs;
}

std::vector<Lab> select_labs(const std::string& only) {
  if (only.empty()) {
    return labs();
  }
  std::vector<std::string> wanted;
  std::stringstream in(only);
  for (std::string id; std::getline(in, id, ',');) {
    const bool known =
        std::any_of(labs().begin(), labs().end(), [&](const Lab& l) { return l.id == id; });
    if (!known) {
      std::string names;
      for (const auto& l : labs()) {
        names += (names.empty() ? "" : ", ") + l.id;
      }
      throw InputError(fmt::format(
          "--only: unknown lab '{}': expected a comma-separated list of {}", id, names));
    }
    wanted.push_back(id);
  }
  std::vector<Lab> out;
  for (const auto& l : labs()) {
    if (std::find(wanted.begin(), wanted.end(), l.id) != wanted.end()) {
      out.push_back(l);
    }
  }
  return out;
}

nlohmann::json lab_scenario_json(const Lab& lab, const LabOptions& options) {
  auto j = parse_file(lab.id + ".json");
  if (options.quick) {
    const auto quick = parse_file("quick.json");
    if (quick.contains(lab.id)) {
      j.merge_patch(quick[lab.id]);
    }
    j["name"] = j.value("name", lab.id) + "-quick";
  }
  auto& server = j["server"];
  if (!options.kind.empty()) {
    server["kind"] = options.kind;
  }
  // The answers compare cache types on a managed server: not on an attached one.
  if (j.contains("answers") && !options.url.empty()) {
    j.erase("answers");
  }
  if (!options.model.empty()) {
    server["model"] = options.model;
  }
  if (!options.url.empty()) {
    server["url"] = options.url;
  }
  if (!options.binary.empty()) {
    server["binary"] = options.binary;
  }
  return j;
}

scenario::Scenario lab_scenario(const Lab& lab, const LabOptions& options) {
  const auto source =
      fmt::format("scenarios/lesson/{}.json{}", lab.id, options.quick ? " (quick size)" : "");
  return scenario::parse_scenario(lab_scenario_json(lab, options).dump(), source);
}

const nlohmann::json& figures() {
  return analysis::lesson_figures();
}

}  // namespace kvbench::lesson
