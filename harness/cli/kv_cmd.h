#pragma once
// `kvbench kv`: the KV-cache arithmetic for a GGUF file, an explicit shape or a preset, for
// every cache type llama.cpp accepts, with totals for given contexts and parallel sequences.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kvbench::cli {

struct KvOptions {
  std::string model;         // a GGUF path; "" when a preset or a shape is given
  std::string preset;        // a name from kv::kv_preset_names()
  std::uint32_t layers = 0;  // explicit shape (with kv_heads and head_dim)
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t head_dim_v = 0;                       // 0: = head_dim
  std::vector<std::uint64_t> ctx{2048, 8192, 32768};  // -c values
  std::uint32_t parallel = 1;                         // -np
  bool unified = false;                               // -kvu
  std::string format = "md";                          // md, json, csv or tsv
};

// Prints the arithmetic: a Markdown table with the shape and notes (md), one JSON object (json),
// or the per-cache-type table (csv, tsv). Throws
// kvbench::InputError when not exactly one of model, preset and shape is given, or the shape is
// unusable.
void run_kv(const KvOptions& options, std::ostream& out);

// Registers `kv` under `app`.
void setup_kv_command(CLI::App& app);

}  // namespace kvbench::cli
