#pragma once
// Synthetic llama-architecture models: complete GGUF files with random weights drawn from a seed,
// small enough to write in a moment and real enough for llama-server to load, tokenize and
// generate with. Everything but write_synthetic_model() is pure.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "harness/gguf/ggml_types.h"
#include "harness/gguf/gguf.h"
#include "harness/gguf/model_shape.h"

namespace kvbench::gguf {

// A SentencePiece-style ("llama") vocabulary: tokens, scores and token types (1 normal,
// 2 unknown, 3 control, 5 unused, 6 byte), all of the same length.
struct SyntheticVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> types;
};

// Tokens of the synthetic vocabulary before padding: <unk> <s> </s>, the 256 byte tokens
// <0x00>..<0xFF>, then printable pieces ("▁"-prefixed letters and short words, letter pairs, single
// characters). Always <= kPresetVocabSize.
std::uint32_t synthetic_vocab_base_size();

// The synthetic vocabulary padded to `n_vocab` tokens with unused "<unused_N>" tokens.
// Throws kvbench::InputError when n_vocab < synthetic_vocab_base_size().
SyntheticVocab synthetic_vocab(std::uint32_t n_vocab);

// Problems with `shape` as a synthetic llama model (llama_shape_problems() plus the vocabulary
// size, no per-layer head counts, arch "llama"); empty when it can be built.
std::vector<std::string> synthetic_shape_problems(const ModelShape& shape);

// Metadata and tensor infos (offsets assigned) of a synthetic model whose large matrices are of
// `weight_type` (f16 or f32; norms are always f32). Throws kvbench::InputError listing every
// problem of synthetic_shape_problems(), or for another weight type.
GgufFile synthetic_model(const ModelShape& shape, GgmlType weight_type);

// Bytes of the whole file synthetic_model(shape, weight_type) describes.
std::uint64_t synthetic_model_bytes(const ModelShape& shape, GgmlType weight_type);

// Receives consecutive pieces of a tensor's data.
using ByteSink = std::function<void(std::span<const std::uint8_t>)>;

// Streams the data of one tensor of a synthetic model to `sink`, in pieces of at most about 1 MiB:
// norm weights ("*_norm.weight") are 1.0; every other value is approximately normal with standard
// deviation 0.02 (a sum of four uniforms), drawn from std::mt19937_64 seeded by `seed` and the
// tensor's name. The same seed and tensor give the same bytes on every platform.
void synthesize_tensor_data(const TensorInfo& tensor, std::uint64_t seed, const ByteSink& sink);

// Writes a complete synthetic model to `path`, tensor by tensor (memory use is independent of
// the model size), through a temporary file renamed into place only when complete. Throws
// kvbench::InputError for a bad shape and kvbench::Error when the file cannot be written.
void write_synthetic_model(const std::filesystem::path& path, const ModelShape& shape,
                           GgmlType weight_type, std::uint64_t seed);

// IEEE 754 binary16 bits of `value`, rounded to nearest even (overflow gives infinity).
std::uint16_t float_to_half(float value);

}  // namespace kvbench::gguf
