#include "harness/results/machine_info.h"

#include "harness/core/optional_json.h"

namespace kvbench::results {

using nlohmann::json;

void to_json(json& out, const GpuDevice& device) {
  out = json{{"index", device.index},
             {"name", device.name},
             {"driver_version", device.driver_version},
             {"memory_total_bytes", or_null(device.memory_total_bytes)},
             {"memory_used_bytes", or_null(device.memory_used_bytes)}};
}

void from_json(const json& in, GpuDevice& device) {
  device = GpuDevice{in.value("index", 0), optional_at<std::uint64_t>(in, "memory_total_bytes"),
                     optional_at<std::uint64_t>(in, "memory_used_bytes"),
                     in.value("driver_version", ""), in.value("name", "")};
}

void to_json(json& out, const MachineInfo& info) {
  out = json{{"hostname", info.hostname},
             {"cpu_model", info.cpu_model},
             {"logical_cores", info.logical_cores},
             {"usable_cores", info.usable_cores},
             {"total_memory_bytes", info.total_memory_bytes},
             {"available_memory_bytes", or_null(info.available_memory_bytes)},
             {"os_name", info.os_name},
             {"kernel_release", info.kernel_release},
             {"kernel_version", info.kernel_version},
             {"architecture", info.architecture},
             {"load_average", or_null(info.load_average)},
             {"gpus", info.gpus}};
}

void from_json(const json& in, MachineInfo& info) {
  info = MachineInfo{};
  info.hostname = in.value("hostname", "");
  info.cpu_model = in.value("cpu_model", "");
  info.logical_cores = in.value("logical_cores", 0);
  info.usable_cores = in.value("usable_cores", 0);
  info.total_memory_bytes = in.value("total_memory_bytes", std::uint64_t{0});
  info.available_memory_bytes = optional_at<std::uint64_t>(in, "available_memory_bytes");
  info.os_name = in.value("os_name", "");
  info.kernel_release = in.value("kernel_release", "");
  info.kernel_version = in.value("kernel_version", "");
  info.architecture = in.value("architecture", "");
  info.load_average = optional_at<std::array<double, 3>>(in, "load_average");
  info.gpus = in.value("gpus", std::vector<GpuDevice>{});
}

}  // namespace kvbench::results
