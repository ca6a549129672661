#include "harness/measure/machine.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness/core/text.h"

namespace kvbench::measure {
namespace {

// The trimmed value of the first "key<sep>value" line whose trimmed key equals `key`.
std::optional<std::string_view> find_value(std::string_view text, std::string_view key,
                                           char separator) {
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    const size_t sep = line.find(separator);
    if (sep != std::string_view::npos && trim(line.substr(0, sep)) == key) {
      return trim(line.substr(sep + 1));
    }
  }
  return std::nullopt;
}

// Removes shell-style quoting from an os-release value: "..." or '...', and \ escapes in "...".
std::string unquote(std::string_view value) {
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    return std::string(value.substr(1, value.size() - 2));
  }
  if (value.size() < 2 || value.front() != '"' || value.back() != '"') {
    return std::string(value);
  }
  value = value.substr(1, value.size() - 2);
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) {
      ++i;
    }
    out.push_back(value[i]);
  }
  return out;
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  if (in) {
    text << in.rdbuf();
  }
  return text.str();
}

int usable_core_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

void fill_from_uname(MachineInfo& info) {
  utsname names{};
  if (uname(&names) == 0) {
    info.hostname = names.nodename;
    info.kernel_release = names.release;
    info.kernel_version = names.version;
    info.architecture = names.machine;
  }
}

}  // namespace

std::string parse_cpu_model(std::string_view cpuinfo) {
  for (std::string_view key : {"model name", "Model", "Hardware"}) {
    if (const auto value = find_value(cpuinfo, key, ':')) {
      return std::string(*value);
    }
  }
  return "";
}

std::optional<std::uint64_t> parse_meminfo_bytes(std::string_view meminfo, std::string_view key) {
  const auto value = find_value(meminfo, key, ':');
  if (!value) {
    return std::nullopt;
  }
  std::uint64_t kib = 0;
  const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), kib);
  if (error != std::errc{} ||
      trim(std::string_view(end, static_cast<size_t>(value->data() + value->size() - end))) !=
          "kB") {
    return std::nullopt;
  }
  return kib * 1024;
}

std::string parse_os_pretty_name(std::string_view os_release) {
  for (std::string_view key : {"PRETTY_NAME", "NAME"}) {
    if (const auto value = find_value(os_release, key, '=')) {
      return unquote(*value);
    }
  }
  return "";
}

std::optional<std::array<double, 3>> parse_loadavg(std::string_view loadavg) {
  std::array<double, 3> loads{};
  const char* cursor = loadavg.data();
  const char* end = loadavg.data() + loadavg.size();
  for (double& load : loads) {
    while (cursor != end && *cursor == ' ') {
      ++cursor;
    }
    const auto [next, error] = std::from_chars(cursor, end, load);
    if (error != std::errc{}) {
      return std::nullopt;
    }
    cursor = next;
  }
  return loads;
}

MachineInfo machine_info() {
  MachineInfo info;
  fill_from_uname(info);
  info.cpu_model = parse_cpu_model(read_file("/proc/cpuinfo"));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  info.logical_cores = online > 0 ? static_cast<int>(online) : 0;
  info.usable_cores = usable_core_count();
  const std::string meminfo = read_file("/proc/meminfo");
  info.total_memory_bytes = parse_meminfo_bytes(meminfo, "MemTotal").value_or(0);
  info.available_memory_bytes = parse_meminfo_bytes(meminfo, "MemAvailable");
  std::string os_release = read_file("/etc/os-release");
  if (os_release.empty()) {
    os_release = read_file("/usr/lib/os-release");
  }
  info.os_name = parse_os_pretty_name(os_release);
  info.load_average = parse_loadavg(read_file("/proc/loadavg"));
  info.gpus = gpu_devices();
  return info;
}

}  // namespace kvbench::measure
