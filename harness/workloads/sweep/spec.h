#pragma once
// The prompt sweep, the default workload: single prompts of each length in factors.prompt_tokens,
// shuffled in rounds, and with factors.edit_position every trial a cold read and an edited
// resend. Its settings are the scenario's factors, repeats and max_tokens, so it has none of its
// own ("workload": {"sweep": {}} names it).

#include <string_view>

#include "harness/workloads/layers.h"

namespace kvbench::workloads {

struct Sweep {
  static constexpr std::string_view kName = "sweep";
};

KVBENCH_WORKLOAD_LAYERS(Sweep)  // its part in each layer (layers.h)

}  // namespace kvbench::workloads
