#pragma once
// The state of the machine around one block, as far as it is readable: the CPU frequency
// governor and current frequency (cpufreq in /sys), the load average, the CPU time stolen by a
// hypervisor and the share of the CPUs busy between two samples (/proc/stat), and the clock and
// temperature of each NVIDIA GPU where nvidia-smi works. A sample at the start and one at the end
// of a block give what happened during it; warnings name a powersave governor and cores another
// process held before the block started. The parsers are pure over the files' text.

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/results/block_facts.h"

namespace kvbench::measure {

// The data and its run.json layout are results'.
using CpuTimes = results::CpuTimes;
using GpuClock = results::GpuClock;
using MachineState = results::MachineState;

// The first line of /proc/stat ("cpu  user nice system idle iowait irq softirq steal ...").
std::optional<CpuTimes> parse_cpu_times(std::string_view stat);
// `nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu --format=csv,noheader,nounits` lines.
std::vector<GpuClock> parse_gpu_clocks(std::string_view csv);

// Reads this machine now. Never throws; what is unreadable stays empty.
MachineState read_machine_state();

// The mean of one cpufreq file (in kHz) over the cpuN folders under `cpu_root`, in MHz; empty when
// no CPU has it. read_cpu_clock_mhz() reads scaling_cur_freq under /sys/devices/system/cpu: a few
// small files, cheap enough to read before every call.
std::optional<double> mean_cpufreq_mhz(const std::filesystem::path& cpu_root, const char* file);
std::optional<double> read_cpu_clock_mhz();

// What a block's run.json entry records: both samples, the steal and busy shares between them,
// and warnings (a powersave governor, except under intel_pstate and amd-pstate, whose powersave
// still scales the clock with load; a 1-minute load at the start above the usable cores).
results::BlockMachineState block_machine_state(const MachineState& start, const MachineState& end,
                                               int usable_cores);

}  // namespace kvbench::measure
