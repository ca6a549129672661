#pragma once
// What a block records besides its plan and its server's address, typed: the memory of the
// server's processes and what its log says, the server's own counters at the start and end, the
// machine's state around the block, the prompt-cache settings pinned on the server, and what a
// block of concurrent calls added up to. run.json writes each under its key in the block's flat
// object, as earlier versions did; a key whose value has another shape than these is kept as read.

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/kv/server_log.h"

namespace kvbench::results {

// Memory summed over a process and its live descendants, from /proc. RSS sums count pages shared
// between the processes once per process; peak_rss_bytes is a sum of per-process peaks.
// {"process_count", "pids", "rss_bytes", "peak_rss_bytes", "virtual_bytes", "swap_bytes"}.
struct TreeMemory {
  std::vector<pid_t> pids;  // the processes counted, root first
  std::uint64_t rss_bytes = 0;
  std::uint64_t peak_rss_bytes = 0;
  std::uint64_t virtual_bytes = 0;
  std::uint64_t swap_bytes = 0;
};

// A managed llama-server's memory: /proc after the load, after the longest prompt and at the end,
// the GPUs' (read where nvidia-smi works; null when it did not answer), and what its log says.
struct ServerMemory {
  std::optional<TreeMemory> after_load;            // memory_after_load
  std::optional<TreeMemory> after_longest_prompt;  // memory_after_longest_prompt
  std::optional<int> longest_prompt_tokens;        //   its prompt_tokens
  std::optional<TreeMemory> at_end;                // memory_at_end
  std::optional<std::uint64_t> peak_rss_bytes;
  bool gpu_read = false;  // a GPU was present: both fields below are written, null when unread
  std::optional<std::uint64_t> gpu_after_load_bytes;
  std::optional<std::uint64_t> gpu_at_end_bytes;
  std::optional<kv::ServerLogMemory> server_log;  // server_log_memory
  std::optional<std::uint64_t> kv_bytes_logged;
};

// Ollama's memory as GET /api/ps reports the model (its entry kept as it came, and the sizes
// read from it), with the runner's processes where kvbench started the server. "memory" holds
// it after the load (process under "process_after_load"), "memory_at_end" at the end ("process").
struct ApiPsMemory {
  nlohmann::json ps;  // the model's /api/ps entry, as the server answered
  std::optional<std::string> error;
  std::optional<std::uint64_t> size_bytes;
  std::optional<std::uint64_t> size_vram_bytes;
  std::optional<std::int64_t> context_length;
  std::optional<TreeMemory> process;
};

// GET /metrics: the samples kvbench knows ({series: value}), or why it did not answer.
struct MetricsScrape {
  std::map<std::string, double> samples;
  std::optional<std::string> error;
};

// The server's counters after the warm-up and at the block's end (dropped when it restarted).
struct ServerCounters {
  MetricsScrape at_start;
  MetricsScrape at_end;
};

// One llama-server flag as the block's argv last gave it: a number, the text when it is not one,
// or absent.
using FlagValue = std::variant<std::monostate, long long, std::string>;

struct PromptCacheSettings {
  FlagValue cache_reuse;    // --cache-reuse
  FlagValue cache_ram_mib;  // --cache-ram / -cram
};

// The aggregate "cpu" line of /proc/stat, in clock ticks (not written to run.json).
struct CpuTimes {
  std::uint64_t busy = 0;   // user + nice + system + irq + softirq
  std::uint64_t idle = 0;   // idle + iowait
  std::uint64_t steal = 0;  // taken by the hypervisor
  std::uint64_t total() const { return busy + idle + steal; }
};

struct GpuClock {
  int index = 0;
  std::optional<double> sm_clock_mhz;
  std::optional<double> temperature_c;
  friend bool operator==(const GpuClock&, const GpuClock&) = default;
};

// One sample of the machine's state (see measure/machine_state.h for how each is read).
struct MachineState {
  std::string governor;           // of cpu0; "" when cpufreq is not readable
  std::string driver;             // cpu0's scaling_driver: intel_pstate, amd-pstate, acpi-cpufreq
  bool driver_recorded = true;    // false in a run.json written before the driver was recorded
  std::optional<double> cpu_mhz;  // mean current frequency over the CPUs that report one
  std::optional<double> cpu_max_mhz;  // mean maximum frequency
  std::optional<std::array<double, 3>> load_average;
  std::optional<CpuTimes> cpu_times;
  std::vector<GpuClock> gpus;
};

// The machine around one block: both samples, the shares of CPU time stolen and busy between
// them (when /proc/stat was readable), and warnings.
struct BlockMachineState {
  MachineState start;
  MachineState end;
  std::optional<double> steal_share;
  std::optional<double> busy_share;
  std::vector<std::string> warnings;
};

// p50, p90, p99 (type 7) of n values.
struct Percentiles {
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  std::size_t n = 0;
};

// What a block of concurrent calls added up to (load::block_stats says how).
struct ConcurrencyStats {
  int calls = 0;
  int ok = 0;
  int refused = 0;
  int failed = 0;
  double span_s = 0;
  int max_in_flight = 0;
  std::optional<double> prompt_tok_per_s;  // with a span
  std::optional<double> decode_tok_per_s;
  std::optional<Percentiles> ttft_ms;
  std::optional<Percentiles> itl_ms;
};

// Where a concurrent block's calls waited inside the server (load::server_queue says how).
struct ServerQueue {
  struct Waits {
    double service_ms_p50 = 0;
    std::size_t waited = 0;
    int max_in_flight = 0;
    int served_at_once = 0;
    std::size_t load_duration_reported = 0;
    std::optional<Percentiles> wait_ms;
    std::optional<Percentiles> waited_ms;
    std::optional<Percentiles> load_duration_ms;
  };
  int calls = 0;
  std::optional<Waits> waits;  // without ok calls or the server's durations: none
};

// Every typed fact of a block; each optional is absent from run.json when empty.
struct BlockFacts {
  ServerMemory memory;
  std::optional<ApiPsMemory> api_ps_after_load;  // "memory" (Ollama)
  std::optional<ApiPsMemory> api_ps_at_end;      // "memory_at_end" (Ollama)
  std::optional<ServerCounters> server_counters;
  std::optional<BlockMachineState> machine_state;
  std::optional<PromptCacheSettings> prompt_cache;
  std::optional<ConcurrencyStats> concurrency;
  std::optional<ServerQueue> server_queue;
  std::optional<int> deferred;      // calls a concurrent block deferred past its end
  std::optional<int> slot_ctx;      // the context of one slot, for concurrent blocks
  std::optional<int> port_retries;  // starts that found the port taken
  // The server's slots where kvbench set them (Ollama's OLLAMA_NUM_PARALLEL); written null when
  // it could not (attached), absent when it did not apply.
  std::optional<int> num_parallel;
  bool num_parallel_unknown = false;
};

// Reads the facts of `block` (a run.json block object) into `facts`; every key it does not type,
// or whose value has another type, goes to `rest` as read. A field missing inside a fact reads
// as empty or zero (hand-written and test files leave some out); a fact that would not write
// back as read (a field this version does not know inside it, a partial object) is typed and
// also kept in `rest`, which a block writes in its place (manifest.cpp), so every block writes
// back as it was read.
void read_block_facts(const nlohmann::json& block, BlockFacts& facts, nlohmann::json& rest);
// Writes the facts present into the block object `j`.
void write_block_facts(nlohmann::json& j, const BlockFacts& f);

void to_json(nlohmann::json& j, const TreeMemory& m);
void from_json(const nlohmann::json& j, TreeMemory& m);
void to_json(nlohmann::json& j, const MachineState& s);
void from_json(const nlohmann::json& j, MachineState& s);
void to_json(nlohmann::json& j, const BlockMachineState& s);
void from_json(const nlohmann::json& j, BlockMachineState& s);
void to_json(nlohmann::json& j, const MetricsScrape& m);
void from_json(const nlohmann::json& j, MetricsScrape& m);
void to_json(nlohmann::json& j, const ServerCounters& c);
void from_json(const nlohmann::json& j, ServerCounters& c);
void to_json(nlohmann::json& j, const PromptCacheSettings& s);
void from_json(const nlohmann::json& j, PromptCacheSettings& s);
void to_json(nlohmann::json& j, const Percentiles& p);
void from_json(const nlohmann::json& j, Percentiles& p);
void to_json(nlohmann::json& j, const ConcurrencyStats& s);
void from_json(const nlohmann::json& j, ConcurrencyStats& s);
void to_json(nlohmann::json& j, const ServerQueue& q);
void from_json(const nlohmann::json& j, ServerQueue& q);

}  // namespace kvbench::results
