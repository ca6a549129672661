#pragma once
// Memory of a server process as the Linux kernel reports it in /proc/<pid>/status. The parser is
// pure over the file's text; the readers return nullopt when the process is gone.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvbench::measure {

// One process's memory, in bytes (the kernel reports kB = 1024 bytes).
struct ProcessMemory {
  std::uint64_t rss_bytes = 0;       // VmRSS: resident now
  std::uint64_t peak_rss_bytes = 0;  // VmHWM: highest resident so far
  std::uint64_t virtual_bytes = 0;   // VmSize
  std::uint64_t swap_bytes = 0;      // VmSwap
  // The resident split (kernels since 4.5): anonymous (heap, KV cache), file-backed (mapped model
  // weights), shared memory.
  std::optional<std::uint64_t> rss_anon_bytes;
  std::optional<std::uint64_t> rss_file_bytes;
  std::optional<std::uint64_t> rss_shmem_bytes;

  friend bool operator==(const ProcessMemory&, const ProcessMemory&) = default;
};

// Parses the text of /proc/<pid>/status. Returns nullopt when it has no VmRSS line (a zombie or a
// kernel thread); other missing or malformed lines leave their field at 0 / nullopt.
std::optional<ProcessMemory> parse_proc_status(std::string_view text);

// Reads /proc/<pid>/status; nullopt when the process is gone, a zombie, or not readable.
std::optional<ProcessMemory> read_process_memory(pid_t pid);

// {"rss_bytes": ..., "peak_rss_bytes": ..., "virtual_bytes": ..., "swap_bytes": ...,
//  "rss_anon_bytes": ... (only the split fields present)}.
void to_json(nlohmann::json& out, const ProcessMemory& memory);

}  // namespace kvbench::measure
