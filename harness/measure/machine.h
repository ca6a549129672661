#pragma once
// What machine a run happened on, recorded in every run.json. The parsers are pure over the text
// of /proc/cpuinfo, /proc/meminfo, /etc/os-release and /proc/loadavg; machine_info() reads them.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/measure/gpu.h"

namespace kvbench::measure {

// The machine (its fields and run.json layout are results').
using MachineInfo = results::MachineInfo;

// The first "model name" of /proc/cpuinfo (x86), else "Model" or "Hardware" (Arm boards);
// "" when none is present.
std::string parse_cpu_model(std::string_view cpuinfo);

// The value of `key` ("MemTotal", "MemAvailable") in /proc/meminfo text, in bytes.
std::optional<std::uint64_t> parse_meminfo_bytes(std::string_view meminfo, std::string_view key);

// PRETTY_NAME from os-release text, with its quotes and backslash escapes removed; falls back to
// NAME; "" when neither is present.
std::string parse_os_pretty_name(std::string_view os_release);

// The three load averages at the start of /proc/loadavg; nullopt when they do not parse.
std::optional<std::array<double, 3>> parse_loadavg(std::string_view loadavg);

// Collects everything above from this machine. Missing sources leave their field empty; never
// throws for an unreadable file. Runs nvidia-smi (with a timeout) when it is installed.
MachineInfo machine_info();

}  // namespace kvbench::measure
