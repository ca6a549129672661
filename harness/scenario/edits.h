#pragma once
// Factors and settings given on the command line (`run`, `plan`, `repeat`): each edits the
// scenario's JSON before it is parsed, so it is validated exactly as the same field in a file.
// Named flags replace the file's field; `--set PATH=VALUE` edits any field, after them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::scenario {

struct ScenarioEdits {
  std::vector<int> prompt_tokens;          // --prompt-tokens
  std::vector<int> num_ctx;                // --num-ctx
  std::vector<std::string> cache_type;     // --cache-type
  std::vector<std::string> cache_type_k;   // --cache-type-k
  std::vector<std::string> cache_type_v;   // --cache-type-v
  std::vector<std::string> edit_position;  // --edit-position: fractions, or "none"
  std::vector<int> batch_size;             // --batch-size
  std::vector<int> ubatch_size;            // --ubatch-size
  std::optional<int> repeats;              // --repeats
  std::optional<int> block_repeats;        // --block-repeats
  std::optional<int> max_tokens;           // --max-tokens
  std::optional<std::uint64_t> seed;       // --seed
  std::optional<int> threads;              // --threads
  std::optional<int> gpu_layers;           // --gpu-layers
  std::string flash_attn;                  // --flash-attn on|off|auto
  std::string kind;                        // --kind
  std::string name;                        // --name
  std::vector<std::string> sets;           // --set PATH=VALUE, in order
  // --model given twice or more: one variant per model (one --model is a server option).
  std::vector<std::string> models;

  // Whether any flag was given.
  bool any() const;
  // The flags given, in the order above ("--num-ctx", "--set answers.prompts"), for messages.
  std::vector<std::string> flags() const;
  // A scenario name made from the flags (for a one-liner without --name): "kvbench-" and the
  // factors' values, e.g. "kvbench-p256-1024-ctx8192-q8_0".
  std::string made_name() const;
};

// The document with the edits applied: named fields first, then each --set. A --set PATH is
// dotted keys, each optionally indexed ("server.args[1]"); its VALUE is read as JSON where it
// parses, else taken as a string. Missing objects on the path are created. Throws InputError
// naming the flag for a malformed --set (no '=', an empty or malformed path, an index past the
// end of an array, a path through a value that is no object or array).
// --cache-type-k and --cache-type-v make the factors' K and V halves (a half not given keeps
// the file's levels), --cache-type both; --cache-type beside either is InputError.
// Two models or more make the variants (named by model_variant_names, the first the baseline);
// a scenario with variants of its own is InputError.
nlohmann::json apply_edits(nlohmann::json doc, const ScenarioEdits& e);

// A variant name per model: a GGUF file's stem, a synthetic preset's name, an Ollama name as
// written, with any character a variant name cannot hold made '-', and "-2", "-3" after a name
// already taken. Pure.
std::vector<std::string> model_variant_names(const std::vector<std::string>& models);

}  // namespace kvbench::scenario
