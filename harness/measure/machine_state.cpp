#include "harness/measure/machine_state.h"

#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/text.h"
#include "harness/measure/machine.h"
#include "harness/process/run_capture.h"

namespace kvbench::measure {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  if (in) {
    text << in.rdbuf();
  }
  return text.str();
}

std::optional<double> number(std::string_view s) {
  s = trim(s);
  double v = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (error != std::errc{} || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = text.find(sep);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) {
      return out;
    }
    text = text.substr(at + 1);
  }
}

std::optional<double> share(std::uint64_t part, std::uint64_t whole) {
  return whole > 0 ? std::optional<double>(static_cast<double>(part) / static_cast<double>(whole))
                   : std::nullopt;
}

}  // namespace

std::optional<CpuTimes> parse_cpu_times(std::string_view stat) {
  const auto line = stat.substr(0, stat.find('\n'));
  if (!line.starts_with("cpu ")) {
    return std::nullopt;
  }
  std::array<std::uint64_t, 8> f{};  // user nice system idle iowait irq softirq steal
  std::string_view rest = line.substr(4);
  std::size_t got = 0;
  for (auto& v : f) {
    rest = trim(rest);
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (error != std::errc{}) {
      break;
    }
    rest = rest.substr(static_cast<std::size_t>(end - rest.data()));
    ++got;
  }
  if (got < 4) {
    return std::nullopt;
  }
  CpuTimes t;
  t.busy = f[0] + f[1] + f[2] + f[5] + f[6];
  t.idle = f[3] + f[4];
  t.steal = f[7];
  return t;
}

std::vector<GpuClock> parse_gpu_clocks(std::string_view csv) {
  std::vector<GpuClock> out;
  for (const auto& raw : split(csv, '\n')) {
    const auto parts = split(raw, ',');
    if (parts.size() != 3) {
      continue;
    }
    const auto index = number(parts[0]);
    if (!index) {
      continue;
    }
    out.push_back({static_cast<int>(*index), number(parts[1]), number(parts[2])});
  }
  return out;
}

std::optional<double> mean_cpufreq_mhz(const std::filesystem::path& cpu_root, const char* file) {
  double sum = 0;
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cpu_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("cpu") || name.size() < 4 ||
        name.find_first_not_of("0123456789", 3) != std::string::npos) {
      continue;
    }
    if (const auto khz = number(read_text(entry.path() / "cpufreq" / file))) {
      sum += *khz / 1000.0;
      ++n;
    }
  }
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

std::optional<double> read_cpu_clock_mhz() {
  const auto mhz = mean_cpufreq_mhz("/sys/devices/system/cpu", "scaling_cur_freq");
  return mhz && *mhz > 0.0 ? mhz : std::nullopt;
}

MachineState read_machine_state() {
  MachineState s;
  s.governor =
      std::string(trim(read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")));
  s.driver = std::string(trim(read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver")));
  s.cpu_mhz = read_cpu_clock_mhz();
  s.cpu_max_mhz = mean_cpufreq_mhz("/sys/devices/system/cpu", "cpuinfo_max_freq");
  s.load_average = parse_loadavg(read_text("/proc/loadavg"));
  s.cpu_times = parse_cpu_times(read_text("/proc/stat"));
  for (const char* smi : {"/usr/bin/nvidia-smi", "/usr/local/bin/nvidia-smi"}) {
    if (!std::filesystem::exists(smi)) {
      continue;
    }
    const auto r = process::run_capture(
        {smi, "--query-gpu=index,clocks.sm,temperature.gpu", "--format=csv,noheader,nounits"},
        std::chrono::seconds(5));
    if (r.status && r.status->kind == process::ExitStatus::Kind::exited && r.status->code == 0) {
      s.gpus = parse_gpu_clocks(r.stdout_text);
    }
    break;
  }
  return s;
}

results::BlockMachineState block_machine_state(const MachineState& start, const MachineState& end,
                                               int usable_cores) {
  results::BlockMachineState j{start, end, std::nullopt, std::nullopt, {}};
  if (start.cpu_times && end.cpu_times && end.cpu_times->total() > start.cpu_times->total()) {
    const std::uint64_t total = end.cpu_times->total() - start.cpu_times->total();
    j.steal_share = *share(end.cpu_times->steal - start.cpu_times->steal, total);
    j.busy_share = *share(end.cpu_times->busy - start.cpu_times->busy, total);
  }
  for (const auto* s : {&start, &end}) {
    // intel_pstate's and amd-pstate's powersave is their default and still follows the load.
    const bool pstate =
        s->driver.starts_with("intel_pstate") || s->driver.starts_with("amd-pstate");
    if (s->governor == "powersave" && !pstate) {
      j.warnings.emplace_back(
          "the CPU frequency governor is powersave: calls run at a lowered clock (set it to "
          "performance to measure at full speed)");
      break;
    }
  }
  if (start.load_average && usable_cores > 0 && (*start.load_average)[0] > usable_cores) {
    j.warnings.push_back(fmt::format(
        "the 1-minute load was {:.2f} on {} usable cores when the block started: more tasks "
        "wanted the CPUs than there are; another process may hold the cores",
        (*start.load_average)[0], usable_cores));
  }
  return j;
}

}  // namespace kvbench::measure
