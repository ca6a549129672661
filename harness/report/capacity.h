#pragma once
// The Markdown of a capacity search (capacity.json): the answer beside the KV-cache arithmetic of
// that many conversations, and every probed level with its latency, throughput and memory. Pure.

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace kvbench::report {

// KV bytes `conversations` conversations of `ctx` tokens take at `cache_type`, from the model
// shape in capacity.json ("model.shape"), as the managed server lays them out (-np N, -c N x
// ctx, not unified); std::nullopt without a shape or for a type whose rows are not whole blocks.
std::optional<std::uint64_t> capacity_kv_bytes(const nlohmann::json& capacity, int conversations);

// "4 conversations of 2048 tokens need 8.00 MiB of KV cache at q8_0 with this model (...)", or
// a sentence saying why the arithmetic is missing.
std::string capacity_kv_sentence(const nlohmann::json& capacity, int conversations);

// Writes the capacity section: request, answer, the KV sentence, and one row per probed level.
void write_capacity_markdown(std::ostream& out, const nlohmann::json& capacity);

}  // namespace kvbench::report
