#pragma once
// `kvbench model synth` writes a synthetic llama GGUF model with random weights;
// `kvbench model info` describes a GGUF model from its header alone.

#include <cstdint>
#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

#include "harness/gguf/model_shape.h"

namespace kvbench::cli {

struct ModelSynthOptions {
  std::string preset;           // "" or a name from gguf::preset_names()
  std::uint32_t layers = 0;     // 0: not given (taken from the preset)
  std::uint32_t embd = 0;       // 0: not given
  std::uint32_t heads = 0;      // 0: not given
  std::uint32_t kv_heads = 0;   // 0: not given (the preset's, else = heads)
  std::uint32_t ff = 0;         // 0: not given
  std::uint32_t ctx_train = 0;  // 0: not given (the preset's, else 32768)
  std::uint32_t vocab = 0;      // 0: not given (gguf::kPresetVocabSize)
  bool f32 = false;             // f32 weights instead of f16
  std::uint64_t seed = 1;
  std::string output;
};

struct ModelInfoOptions {
  std::string path;
  bool json = false;
};

// The shape a synth request asks for: the preset's, with every given size applied on top.
// Throws kvbench::InputError for an unknown preset, a size missing without a preset, or a shape
// a synthetic llama model cannot have.
gguf::ModelShape synth_shape(const ModelSynthOptions& options);

// Writes the model and prints one line saying what was written to `out`.
void run_model_synth(const ModelSynthOptions& options, std::ostream& out);

// Prints architecture, shape, tokenizer size, tensor count, file size and KV bytes per token (f16
// and q8_0) of a GGUF file, as text or (options.json) one JSON object. Reads only the header.
void run_model_info(const ModelInfoOptions& options, std::ostream& out);

// Registers `model synth` and `model info` under `app`.
void setup_model_command(CLI::App& app);

}  // namespace kvbench::cli
