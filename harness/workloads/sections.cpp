// The report layer's side of the table of workloads (workload.h), compiled into the report
// module.

#include <cstddef>
#include <string>
#include <variant>

#include "harness/report/workload_section.h"
#include "harness/workloads/workload.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

template <std::size_t I = 0>
workloads::Workload named_in(const json& scenario) {
  if constexpr (I == std::variant_size_v<workloads::Workload>) {
    return workloads::Workload{};
  } else {
    using W = std::variant_alternative_t<I, workloads::Workload>;
    const std::string name(W::kName);
    const json chosen = scenario.is_object() ? scenario.value("workload", json::object()) : json();
    if (scenario.is_object() &&
        (scenario.contains(name) || (chosen.is_object() && chosen.contains(name)))) {
      return W{};
    }
    return named_in<I + 1>(scenario);
  }
}

// The workload a run ran, by the name its resolved scenario records (a top-level key, as
// run.json writes a conversation, or under "workload"); the first, the sweep, when none. Its
// settings are left at their defaults: each workload's report reads them from run.json.
workloads::Workload workload_of(const json& scenario) {
  return named_in(scenario);
}

}  // namespace

WorkloadSection workload_section(const results::RunManifest& run,
                                 const std::vector<CallRecord>& calls) {
  return std::visit([&](const auto& w) { return report_section(w, run, calls); },
                    workload_of(run.scenario));
}

}  // namespace kvbench::report
