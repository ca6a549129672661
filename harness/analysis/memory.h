#pragma once
// Memory of a run: per managed block, resident memory after load against after the
// longest prompt (was the window reserved up front?); for a num_ctx sweep, a straight-line fit of
// memory against the cache cells (bytes per token with a CI) beside the arithmetic of every cache
// type, naming the type whose arithmetic explains the slope; for cache type as a factor, the
// measured ratio between types against the arithmetic. Pure: run.json in, the analysis out
// (report/memory.h prints it).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/gguf/model_shape.h"
#include "harness/results/manifest.h"

namespace kvbench::analysis {

// A measured slope explains a type's arithmetic when |slope / arithmetic - 1| is at most this.
inline constexpr double kSlopeTolerance = 0.10;
// A block "reserved the window up front" when resident memory grew by less than this fraction
// of its KV arithmetic between load and the end of its longest prompt.
inline constexpr double kUpFrontFraction = 0.5;

struct BlockMemoryRow {
  int index = 0;
  int num_ctx = 0;
  std::uint64_t cells = 0;  // num_ctx padded as llama.cpp pads it, times the server's slots
  std::string cache_type;
  std::optional<std::uint64_t> kv_logged_bytes;
  std::optional<std::uint64_t> kv_arithmetic_bytes;  // the block's cache type at its cells
  // K and V apart, where the block's pair differs (q8_0 keys, f16 values): the arithmetic per
  // half at its cells, and the log's K and V sizes (absent without a totals line).
  struct Halves {
    std::uint64_t k_arithmetic_bytes = 0;
    std::uint64_t v_arithmetic_bytes = 0;
    std::optional<std::uint64_t> k_logged_bytes;
    std::optional<std::uint64_t> v_logged_bytes;
  };
  std::optional<Halves> kv_halves;
  std::optional<std::uint64_t> rss_after_load_bytes;
  std::optional<std::uint64_t> rss_after_longest_bytes;
  int longest_prompt_tokens = 0;
  std::optional<std::uint64_t> peak_rss_bytes;
  std::optional<std::uint64_t> gpu_after_load_bytes;
  std::optional<std::uint64_t> ollama_size_bytes;  // Ollama: GET /api/ps "size" after the load
  std::vector<std::string> notes;
};

// One straight-line fit of a memory measure against cells.
struct SlopeFit {
  std::string measure;  // "kv_logged" or "rss_after_load"
  std::size_t n = 0;    // blocks in the fit
  double bytes_per_token = 0;
  std::optional<double> ci_lower;  // absent with only two distinct num_ctx values
  std::optional<double> ci_upper;
  std::string closest_type;             // the type whose arithmetic is nearest the slope
  double closest_ratio = 0;             // slope / that arithmetic
  std::vector<std::string> explaining;  // types within kSlopeTolerance, closest first
};

struct CtxSweep {
  std::string cache_type;  // the type the server was started with
  std::vector<SlopeFit> fits;
};

struct TypeComparison {
  int num_ctx = 0;
  std::string type;       // compared with `reference`
  std::string reference;  // "f16" when present
  std::optional<double> kv_logged_ratio;
  std::optional<double> arithmetic_ratio;
  std::optional<double> rss_difference_bytes;         // reference minus type
  std::optional<double> arithmetic_difference_bytes;  // reference minus type
};

struct MemoryAnalysis {
  std::optional<gguf::ModelShape> shape;  // from run.json's model, when known
  std::vector<BlockMemoryRow> blocks;     // blocks with any memory measured
  std::vector<CtxSweep> sweeps;
  std::vector<TypeComparison> comparisons;
};

// Fits `ys` (bytes) against `cells`: OLS with an intercept when there are 3+ points and 2+
// distinct cells (95% CI of the slope), a two-point slope for 2; std::nullopt otherwise.
// The arithmetic of every type of `shape` is compared with the slope.
std::optional<SlopeFit> fit_slope(const std::string& measure, const std::vector<double>& cells,
                                  const std::vector<double>& ys,
                                  const std::optional<gguf::ModelShape>& shape);

MemoryAnalysis analyze_memory(const results::RunManifest& run);

}  // namespace kvbench::analysis
