#pragma once
// The factor and setting flags of `run`, `plan` and `repeat` (scenario/edits.h), and the scenario
// they make: a file edited by them, or without one the bundled quick start.

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/scenario/edits.h"
#include "harness/scenario/scenario.h"

namespace kvbench::cli {

// Registers --prompt-tokens, --num-ctx, --cache-type, --edit-position (comma-separated lists),
// --repeats, --block-repeats, --max-tokens, --seed, --threads, --flash-attn, --kind, --name and
// --set PATH=VALUE (repeatable).
void add_scenario_flags(CLI::App* cmd, scenario::ScenarioEdits& e);

// The scenario `arg` names (a file, "-", or a bundled name) with the flags applied. Without one
// (`arg` empty) the bundled quick start is edited: named by --name or by the flags, and with
// `attached` (a --url) its rounds run in one block, an attached server being one start.
// `model` (--model) is the quick start's model before it is parsed, so a kind that needs one by
// name (--kind ollama) takes it.
scenario::Scenario scenario_with_flags(const std::string& arg, const scenario::ScenarioEdits& e,
                                       bool attached, const std::string& model = "");

// `e` with --model's models where it was given twice or more (one variant each).
scenario::ScenarioEdits edits_with_models(scenario::ScenarioEdits e,
                                          const std::vector<std::string>& models);

// Whether the flags give the field at dotted `path` with --set.
bool sets_field(const scenario::ScenarioEdits& e, std::string_view path);

// Whether the user named the server's kind (--kind, --set server.kind or the file's server.kind);
// the quick start's own llama-server does not count.
bool kind_stated(const std::string& arg, const scenario::ScenarioEdits& e,
                 const scenario::Scenario& s);

// Writes the resolved scenario (what run.json records) to `path` (--scenario-out), whole or not
// at all: a file that runs the same plan without the flags.
void write_scenario_out(const std::string& path, const scenario::Scenario& s);

}  // namespace kvbench::cli
