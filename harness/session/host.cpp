#include "harness/session/host.h"

#include <cmath>

#include <fmt/format.h>

#include "harness/core/text.h"

namespace kvbench::session {

namespace {

std::string text_at(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                                : std::string{};
}

template <typename T>
T number_at(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<T>() : T{};
}

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

}  // namespace

HostFingerprint host_fingerprint(const results::RunManifest& run) {
  HostFingerprint h;
  const results::MachineInfo m = run.machine.value_or(results::MachineInfo{});
  h.hostname = m.hostname;
  h.cpu_model = m.cpu_model;
  h.logical_cores = m.logical_cores;
  h.memory_bytes = m.total_memory_bytes;
  h.os_name = m.os_name;
  h.kernel_release = m.kernel_release;
  h.architecture = m.architecture;
  for (const auto& g : m.gpus) {
    const auto bytes = g.memory_total_bytes.value_or(0);
    h.gpus.push_back(bytes > 0 ? fmt::format("{} ({} MiB)", g.name, bytes >> 20) : g.name);
  }
  const auto& s = run.server;
  h.server_kind = text_at(s, "kind");
  h.server_version = first_line(text_at(s, "version"));
  h.server_binary = text_at(s, "binary");
  h.kvbench_version = run.kvbench.version;
  return h;
}

std::string calls_digest(const std::vector<CallRecord>& calls) {
  std::string lines;
  for (const auto& c : calls) {
    lines += to_json(c).dump();
    lines += '\n';
  }
  return fmt::format("fnv1a64:{:016x}", fnv1a64(lines));
}

std::string host_class(const HostFingerprint& h) {
  const double gib = static_cast<double>(h.memory_bytes) / static_cast<double>(1ULL << 30);
  std::string gpus = h.gpus.empty() ? "no GPU" : "";
  for (std::size_t i = 0; i < h.gpus.size(); ++i) {
    gpus += (i == 0 ? "" : " + ") + h.gpus[i];
  }
  return fmt::format("{}, {} cores, {} GiB, {}, {}", h.cpu_model.empty() ? "?" : h.cpu_model,
                     h.logical_cores, std::lround(gib), gpus,
                     h.architecture.empty() ? "?" : h.architecture);
}

void to_json(nlohmann::json& j, const HostFingerprint& h) {
  j = {{"hostname", h.hostname},
       {"cpu_model", h.cpu_model},
       {"logical_cores", h.logical_cores},
       {"memory_bytes", h.memory_bytes},
       {"gpus", h.gpus},
       {"os_name", h.os_name},
       {"kernel_release", h.kernel_release},
       {"architecture", h.architecture},
       {"server_kind", h.server_kind},
       {"server_version", h.server_version},
       {"server_binary", h.server_binary},
       {"kvbench_version", h.kvbench_version}};
}

void from_json(const nlohmann::json& j, HostFingerprint& h) {
  h = {};
  h.hostname = text_at(j, "hostname");
  h.cpu_model = text_at(j, "cpu_model");
  h.logical_cores = number_at<int>(j, "logical_cores");
  h.memory_bytes = number_at<std::uint64_t>(j, "memory_bytes");
  if (j.is_object() && j.contains("gpus") && j["gpus"].is_array()) {
    for (const auto& g : j["gpus"]) {
      if (g.is_string()) {
        h.gpus.push_back(g.get<std::string>());
      }
    }
  }
  h.os_name = text_at(j, "os_name");
  h.kernel_release = text_at(j, "kernel_release");
  h.architecture = text_at(j, "architecture");
  h.server_kind = text_at(j, "server_kind");
  h.server_version = text_at(j, "server_version");
  h.server_binary = text_at(j, "server_binary");
  h.kvbench_version = text_at(j, "kvbench_version");
}

}  // namespace kvbench::session
