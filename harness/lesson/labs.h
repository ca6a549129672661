#pragma once
// The lesson's five labs as scenarios: the files in scenarios/lesson/ (compiled in), sized for
// the default or --quick run, with the server kind, model and URL the command line gives.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/scenario/scenario.h"

namespace kvbench::lesson {

struct Lab {
  std::string id;     // "prompt-length", also the scenario file's name
  std::string title;  // "Prompt length: TTFT and decode rate"
};

// The labs in the order they run and are reported.
const std::vector<Lab>& labs();

// The labs named in `only` (comma-separated ids, in the canonical order); every lab when empty.
// Throws InputError naming an unknown id and the known ones.
std::vector<Lab> select_labs(const std::string& only);

struct LabOptions {
  bool quick = false;
  std::string kind;    // "llama-server", "ollama", "openai" or "anthropic"; empty: the file's
  std::string model;   // empty: the file's (or the quick size's)
  std::string url;     // non-empty: attach
  std::string binary;  // managed server executable
};

// The lab's scenario as JSON: its file, with the quick patch (scenarios/lesson/quick.json, a JSON
// merge patch) when `quick`, and the server overrides applied. Pure.
nlohmann::json lab_scenario_json(const Lab& lab, const LabOptions& options);

// The same, parsed and validated; throws InputError naming the lab's file on a problem.
scenario::Scenario lab_scenario(const Lab& lab, const LabOptions& options);

// The lesson's figures file (scenarios/lesson/figures.json), parsed.
const nlohmann::json& figures();

}  // namespace kvbench::lesson
