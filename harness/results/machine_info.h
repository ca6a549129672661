#pragma once
// The machine a run ran on, as run.json's "machine" records it when the run starts: the host,
// its CPUs and memory, the OS, the load, and the NVIDIA GPUs nvidia-smi lists (measure/ reads
// them; see measure/machine.h and measure/gpu.h).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::results {

// One GPU from `nvidia-smi --query-gpu=index,memory.total,memory.used,driver_version,name`.
struct GpuDevice {
  int index = 0;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<std::uint64_t> memory_used_bytes;
  std::string driver_version;
  std::string name;
  friend bool operator==(const GpuDevice&, const GpuDevice&) = default;
};

struct MachineInfo {
  std::string hostname;
  std::string cpu_model;  // "" when /proc/cpuinfo names none
  int logical_cores = 0;  // online logical CPUs
  int usable_cores = 0;   // CPUs kvbench may run on (affinity mask, e.g. a container's)
  std::uint64_t total_memory_bytes = 0;
  std::optional<std::uint64_t> available_memory_bytes;  // MemAvailable when read
  std::string os_name;         // PRETTY_NAME of /etc/os-release, "" when missing
  std::string kernel_release;  // uname -r
  std::string kernel_version;  // uname -v
  std::string architecture;    // uname -m
  std::optional<std::array<double, 3>> load_average;  // 1, 5, 15 minutes
  std::vector<GpuDevice> gpus;                        // from nvidia-smi; empty without it
};

// Every field is written; a value not read is null. Reading, a missing field is empty or zero.
void to_json(nlohmann::json& out, const GpuDevice& device);
void from_json(const nlohmann::json& in, GpuDevice& device);
void to_json(nlohmann::json& out, const MachineInfo& info);
void from_json(const nlohmann::json& in, MachineInfo& info);

}  // namespace kvbench::results
