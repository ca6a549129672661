#pragma once
// The memory llama.cpp reports in a server's log at load: the KV cache totals line (cells,
// layers, sequences, K and V types and sizes) and the per-backend buffer sizes (model, KV,
// compute, output, RS). Pure over the log's text; every format of the KV-cache lines llama-server's
// log has had.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::kv {

// One KV cache as its totals line reports it (`llama_kv_cache: size = ...`, or older
// `KV self size = ...`). A model with sliding-window layers has two: cache "swa" and "non-swa".
struct KvTotals {
  std::string cache;  // "", "swa" or "non-swa"
  std::string component;
  double size_mib = 0;
  std::optional<std::uint64_t> cells;
  std::optional<std::uint32_t> layers;
  std::optional<std::uint32_t> seqs;
  std::optional<std::uint32_t> streams;  // absent in mid-2025 builds ("1 seqs")
  std::string type_k;
  std::string type_v;
  double k_mib = 0;
  double v_mib = 0;
  friend bool operator==(const KvTotals&, const KvTotals&) = default;
};

// One `<component>: <backend> <kind> buffer size = <X> MiB` line.
struct BufferSize {
  std::string cache;  // "", "swa" or "non-swa" (set for KV buffers only)
  std::string component;
  std::string backend;  // "CPU", "CUDA0", "CPU_Mapped", ...
  std::string kind;     // "model", "KV", "compute", "output", "RS"
  double mib = 0;
  friend bool operator==(const BufferSize&, const BufferSize&) = default;
};

struct ServerLogMemory {
  std::vector<KvTotals> kv;         // the last line per cache, in first-seen order
  std::vector<BufferSize> buffers;  // the last line per (cache, component, backend, kind)
  bool empty() const { return kv.empty() && buffers.empty(); }
};

// Parses a whole log. Lines may carry a timestamp and level prefix ("0.00.055.670 I ").
// When a line repeats (a server probing sizes before loading), the last value wins.
ServerLogMemory parse_server_log(std::string_view text);

// KV bytes the log reports: the sum of the totals lines, else of the KV buffers; nullopt when
// the log has neither. MiB are printed with two decimals, so this is exact to about 5 KiB.
std::optional<std::uint64_t> logged_kv_bytes(const ServerLogMemory& memory);

// Sum of the buffers of one kind ("model", "compute", ...); nullopt when there is none.
std::optional<std::uint64_t> logged_buffer_bytes(const ServerLogMemory& memory,
                                                 std::string_view kind);

// {"kv": [...], "buffers": [...], "kv_bytes": n|null}.
void to_json(nlohmann::json& out, const ServerLogMemory& memory);
void from_json(const nlohmann::json& in, ServerLogMemory& memory);

}  // namespace kvbench::kv
