#pragma once
// NVIDIA GPU memory through nvidia-smi, when it is installed. The CSV parsers are pure; the
// queries run nvidia-smi from an argument vector with a timeout and return nullopt (or nothing)
// when it is missing or fails.
//
// Inside a container with its own pid namespace, nvidia-smi may report host pids that match no
// pid kvbench sees; the per-device used memory (GpuDevice) still tells the total.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/results/machine_info.h"

namespace kvbench::measure {

// One line of `nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits`.
struct GpuProcessMemory {
  pid_t pid = 0;
  std::optional<std::uint64_t> used_bytes;  // nullopt when nvidia-smi says [N/A]
  friend bool operator==(const GpuProcessMemory&, const GpuProcessMemory&) = default;
};

// One GPU from `nvidia-smi --query-gpu=...` (its fields and run.json layout are results').
using GpuDevice = results::GpuDevice;

// Parses "pid, used_memory" lines (used memory in MiB). Blank and malformed lines are skipped.
std::vector<GpuProcessMemory> parse_compute_apps(std::string_view csv);

// Parses "index, memory.total, memory.used, driver_version, name" lines (memory in MiB; the name
// is last so that a comma inside it survives). Blank and malformed lines are skipped.
std::vector<GpuDevice> parse_gpu_query(std::string_view csv);

// GPU memory used by the processes in `pids` (summed over GPUs and processes), in bytes: 0 when
// none of them uses a GPU; nullopt when nvidia-smi is missing or fails, a matching entry has no
// number, or nvidia-smi lists a pid that is not in this pid namespace (then no entry can be told
// apart from the server's own; the device's used memory still tells the total).
std::optional<std::uint64_t> gpu_memory_of(const std::vector<pid_t>& pids);
// The same for one process.
std::optional<std::uint64_t> gpu_memory_of(pid_t pid);

// The GPUs nvidia-smi lists; empty when it is missing or fails.
std::vector<GpuDevice> gpu_devices();

}  // namespace kvbench::measure
