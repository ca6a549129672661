#pragma once
// What a history keeps about one session besides its values: the run, the scenario, and the host
// it ran on (its fingerprint, and the host class the history gate compares within).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::session {

// The host a run ran on, from run.json's "machine", "server" and "kvbench" sections.
struct HostFingerprint {
  std::string hostname;
  std::string cpu_model;
  int logical_cores = 0;
  std::uint64_t memory_bytes = 0;  // MemTotal
  std::vector<std::string> gpus;   // "name (N MiB)" per device, in index order
  std::string os_name;
  std::string kernel_release;
  std::string architecture;
  std::string server_kind;     // llama-server, ollama, openai, ...
  std::string server_version;  // the first line of its --version, or what the server reported
  std::string server_binary;   // managed servers: the executable
  std::string kvbench_version;
  friend bool operator==(const HostFingerprint&, const HostFingerprint&) = default;
};

void to_json(nlohmann::json& j, const HostFingerprint& h);
void from_json(const nlohmann::json& j, HostFingerprint& h);

// The host class: the hardware that sets a session's speed, in words, e.g.
// "Intel(R) Xeon(R) Processor, 2 cores, 24 GiB, no GPU, x86_64". Sessions of one class are
// comparable; the server build and kvbench's version are not part of it (a change of either is
// what the history gate is there to judge). Memory is rounded to the nearest GiB.
std::string host_class(const HostFingerprint& h);

struct SessionInfo {
  std::string run_id;
  std::string recorded_at;  // UTC, when the run started
  std::string label;
  std::string scenario_name;
  std::string scenario_hash;
  std::string git_revision;
  std::string machine;  // host name and CPU
  std::string run_dir;
  // The run's own labels (`kvbench run --label k=v`), "k=v" joined by ", " in name order.
  std::string run_labels;
  HostFingerprint host;
  std::string host_class;    // host_class(host), or "" for a session stored without a fingerprint
  std::string calls_digest;  // fnv1a64 of the run's calls, to tell the same run from a changed one
  std::int64_t calls = 0;    // records stored in the calls table
};

}  // namespace kvbench::session
