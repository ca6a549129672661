#include "harness/measure/gpu.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "harness/core/text.h"
#include "harness/process/child.h"
#include "harness/process/run_capture.h"

namespace kvbench::measure {
namespace {

constexpr std::uint64_t kMiB = 1024ULL * 1024;
constexpr std::chrono::milliseconds kQueryTimeout{10000};

// Splits at the first `count` commas: count + 1 trimmed fields, or fewer when commas are missing.
std::vector<std::string_view> split_fields(std::string_view line, size_t count) {
  std::vector<std::string_view> fields;
  while (fields.size() < count) {
    const size_t comma = line.find(',');
    if (comma == std::string_view::npos) {
      break;
    }
    fields.push_back(trim(line.substr(0, comma)));
    line.remove_prefix(comma + 1);
  }
  fields.push_back(trim(line));
  return fields;
}

template <typename Int>
std::optional<Int> parse_int(std::string_view text) {
  Int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// A MiB count in bytes; nullopt for "[N/A]", "[Not Supported]" and the like.
std::optional<std::uint64_t> mib_to_bytes(std::string_view text) {
  const auto mib = parse_int<std::uint64_t>(text);
  return mib ? std::optional<std::uint64_t>(*mib * kMiB) : std::nullopt;
}

template <typename Handle>
void for_each_line(std::string_view text, Handle handle) {
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    handle(trim(text.substr(0, newline)));
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
  }
}

// stdout of a successful nvidia-smi run with `query`; nullopt when it is missing or fails.
std::optional<std::string> run_nvidia_smi(const std::string& query) {
  const auto path = process::find_on_path("nvidia-smi");
  if (!path) {
    return std::nullopt;
  }
  try {
    auto result = process::run_capture(
        std::vector<std::string>{path->string(), query, "--format=csv,noheader,nounits"},
        kQueryTimeout);
    if (result.timed_out || !result.status || !result.status->success()) {
      return std::nullopt;
    }
    return std::move(result.stdout_text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<GpuProcessMemory> parse_compute_apps(std::string_view csv) {
  std::vector<GpuProcessMemory> apps;
  for_each_line(csv, [&apps](std::string_view line) {
    const auto fields = split_fields(line, 1);
    const auto pid = fields.size() == 2 ? parse_int<pid_t>(fields[0]) : std::nullopt;
    if (pid) {
      apps.push_back(GpuProcessMemory{*pid, mib_to_bytes(fields[1])});
    }
  });
  return apps;
}

std::vector<GpuDevice> parse_gpu_query(std::string_view csv) {
  std::vector<GpuDevice> devices;
  for_each_line(csv, [&devices](std::string_view line) {
    const auto fields = split_fields(line, 4);
    const auto index = fields.size() == 5 ? parse_int<int>(fields[0]) : std::nullopt;
    if (index) {
      devices.push_back(GpuDevice{*index, mib_to_bytes(fields[1]), mib_to_bytes(fields[2]),
                                  std::string(fields[3]), std::string(fields[4])});
    }
  });
  return devices;
}

std::optional<std::uint64_t> gpu_memory_of(const std::vector<pid_t>& pids) {
  const auto csv = run_nvidia_smi("--query-compute-apps=pid,used_memory");
  if (!csv) {
    return std::nullopt;
  }
  std::uint64_t total = 0;
  for (const GpuProcessMemory& app : parse_compute_apps(*csv)) {
    if (std::find(pids.begin(), pids.end(), app.pid) == pids.end()) {
      // A pid this process cannot see is another pid namespace's (a container's host): the
      // memory may be the server's under another number, so none of it can be attributed.
      std::error_code ec;
      if (!std::filesystem::exists(fmt::format("/proc/{}", app.pid), ec)) {
        return std::nullopt;
      }
      continue;
    }
    if (!app.used_bytes) {
      return std::nullopt;
    }
    total += *app.used_bytes;
  }
  return total;
}

std::optional<std::uint64_t> gpu_memory_of(pid_t pid) {
  return gpu_memory_of(std::vector<pid_t>{pid});
}

std::vector<GpuDevice> gpu_devices() {
  const auto csv = run_nvidia_smi("--query-gpu=index,memory.total,memory.used,driver_version,name");
  return csv ? parse_gpu_query(*csv) : std::vector<GpuDevice>{};
}

}  // namespace kvbench::measure
