#pragma once
// Model files for managed servers: synthetic models written on demand, GGUF files checked
// before a server is asked to load them.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace kvbench::run {

// Seed of the weights of every "synthetic:<preset>" model (the shape, not the weights, sets the
// speed and memory that kvbench measures).
inline constexpr std::uint64_t kSyntheticSeed = 1;

// Path, size, architecture and shape of a GGUF file, for run.json. Throws InputError when the
// file is not a readable GGUF file.
nlohmann::json describe_model_file(const std::string& path);

}  // namespace kvbench::run
