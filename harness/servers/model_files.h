#pragma once
// Model files for managed servers: synthetic models written on demand, GGUF files checked
// before a server is asked to load them.

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace kvbench::servers {

// Seed of the weights of every "synthetic:<preset>" model (the shape, not the weights, sets the
// speed and memory that kvbench measures).
inline constexpr std::uint64_t kSyntheticSeed = 1;

// Finds llama-server: `explicit_path` if given, else $KVBENCH_LLAMA_SERVER, else
// .deps/llama/bin/llama-server above the kvbench executable (a source tree), else
// <user data>/llama/bin/llama-server (where an installed get-llama-server.sh puts it), else
// llama-server on PATH. Throws InputError naming what was tried.
std::string find_llama_server(const std::string& explicit_path);

// The user's kvbench data folder: $XDG_DATA_HOME/kvbench, else ~/.local/share/kvbench; empty
// without either variable.
std::filesystem::path user_data_dir();

// The default folder for synthetic models: $KVBENCH_MODELS_DIR, else $XDG_CACHE_HOME/kvbench/
// models, else ~/.cache/kvbench/models.
std::filesystem::path default_models_dir();

// A GGUF path for `model`: "synthetic:<preset>" is written once into `models_dir` (seeded,
// reused afterwards); a path must be a readable GGUF file. Throws InputError otherwise.
std::string resolve_model(const std::string& model, const std::filesystem::path& models_dir);

// Path, size, architecture and shape of a GGUF file, for run.json. Throws InputError when the
// file is not a readable GGUF file.
nlohmann::json describe_model_file(const std::string& path);

}  // namespace kvbench::servers
