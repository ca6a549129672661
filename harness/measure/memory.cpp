#include "harness/measure/memory.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace kvbench::measure {
namespace {

// The value of a "Key:   1234 kB" line in bytes; nullopt when the number does not parse.
std::optional<std::uint64_t> parse_kib_value(std::string_view rest) {
  const size_t begin = rest.find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    return std::nullopt;
  }
  rest.remove_prefix(begin);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (error != std::errc{}) {
    return std::nullopt;
  }
  std::string_view unit(end, static_cast<size_t>(rest.data() + rest.size() - end));
  const size_t unit_begin = unit.find_first_not_of(" \t");
  unit = unit_begin == std::string_view::npos ? std::string_view{} : unit.substr(unit_begin);
  if (unit.starts_with("kB")) {
    return value * 1024;
  }
  return unit.empty() ? std::optional<std::uint64_t>(value) : std::nullopt;
}

void assign(std::string_view key, std::uint64_t bytes, ProcessMemory& memory, bool& has_rss) {
  if (key == "VmRSS") {
    memory.rss_bytes = bytes;
    has_rss = true;
  } else if (key == "VmHWM") {
    memory.peak_rss_bytes = bytes;
  } else if (key == "VmSize") {
    memory.virtual_bytes = bytes;
  } else if (key == "VmSwap") {
    memory.swap_bytes = bytes;
  } else if (key == "RssAnon") {
    memory.rss_anon_bytes = bytes;
  } else if (key == "RssFile") {
    memory.rss_file_bytes = bytes;
  } else if (key == "RssShmem") {
    memory.rss_shmem_bytes = bytes;
  }
}

}  // namespace

std::optional<ProcessMemory> parse_proc_status(std::string_view text) {
  ProcessMemory memory;
  bool has_rss = false;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    if (const auto bytes = parse_kib_value(line.substr(colon + 1))) {
      assign(line.substr(0, colon), *bytes, memory, has_rss);
    }
  }
  return has_rss ? std::optional<ProcessMemory>(memory) : std::nullopt;
}

std::optional<ProcessMemory> read_process_memory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_proc_status(text.str());
}

void to_json(nlohmann::json& out, const ProcessMemory& memory) {
  out = nlohmann::json{{"rss_bytes", memory.rss_bytes},
                       {"peak_rss_bytes", memory.peak_rss_bytes},
                       {"virtual_bytes", memory.virtual_bytes},
                       {"swap_bytes", memory.swap_bytes}};
  if (memory.rss_anon_bytes) {
    out["rss_anon_bytes"] = *memory.rss_anon_bytes;
  }
  if (memory.rss_file_bytes) {
    out["rss_file_bytes"] = *memory.rss_file_bytes;
  }
  if (memory.rss_shmem_bytes) {
    out["rss_shmem_bytes"] = *memory.rss_shmem_bytes;
  }
}

}  // namespace kvbench::measure
