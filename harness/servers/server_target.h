#pragma once
// A llama-server a block runs against: the scenario's server, or one of its variants, with its
// binary found, its model written or checked and its API key read (managed), or its /health
// checked (attached).

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/http/transport.h"
#include "harness/run/runner.h"
#include "harness/scenario/scenario.h"

namespace kvbench::servers {

struct ServerTarget {
  std::string variant;  // empty without variants
  scenario::ServerSpec spec;
  std::string binary;      // managed
  std::string model_path;  // managed
  std::string api_key;
  nlohmann::json server;  // for run.json: kind, mode, binary and version, or url
  nlohmann::json model;   // for run.json: the model's file and shape (managed), or its name
};

// The API key a server spec names (api_key_env); empty when it names none. Throws InputError
// when the variable is not set.
std::string api_key_from(const scenario::ServerSpec& s);

// Prepares `spec` for scenario `s` (whose factors it must fit). Throws InputError for bad input
// (no binary, unreadable model, unset API key variable, a cache type the model cannot hold) and
// Error when an attached server does not answer /health; nothing is started.
ServerTarget prepare_llama_target(const scenario::Scenario& s, const scenario::ServerSpec& spec,
                                  const run::RunOptions& o, http::Transport& transport);

// The target of every variant of `s`, in order (the scenario's own server when it has none).
std::vector<ServerTarget> prepare_llama_targets(const scenario::Scenario& s,
                                                const run::RunOptions& o,
                                                http::Transport& transport);

}  // namespace kvbench::servers
