// The plan layer's side of the table of workloads (workload.h), compiled into the plan module.

#include <variant>

#include "harness/plan/plan_detail.h"
#include "harness/workloads/scenario_workload.h"

namespace kvbench::plan::detail {

std::vector<int> workload_slot_levels(const scenario::Scenario& s) {
  return std::visit([&](const auto& w) { return workloads::slot_levels(s, w); }, workloads::of(s));
}

void fill_block(Block& b, const scenario::Scenario& s, Rng& rng) {
  std::visit([&](const auto& w) { workloads::fill_block(b, s, w, rng); }, workloads::of(s));
}

}  // namespace kvbench::plan::detail
