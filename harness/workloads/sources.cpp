// The run layer's side of the table of workloads (workload.h), compiled into the run module.

#include <type_traits>
#include <variant>

#include "harness/run/workloads.h"
#include "harness/workloads/scenario_workload.h"

namespace kvbench::run {

std::unique_ptr<CallSource> make_source(const scenario::Scenario& s, const Clock& wall_clock,
                                        const std::string& run_id) {
  return std::visit([&](const auto& w) { return workloads::make_source(s, w, wall_clock, run_id); },
                    workloads::of(s));
}

namespace {

template <typename W>
concept Shardable = requires(W& w) {
  workloads::shard(w, 0, 1);
};

}  // namespace

bool sharded(const scenario::Scenario& s) {
  return std::visit([](const auto& w) { return Shardable<std::decay_t<decltype(w)>>; },
                    workloads::of(s));
}

void shard(scenario::Scenario& s, int index, int count) {
  std::visit(
      [&](auto& w) {
        if constexpr (Shardable<std::decay_t<decltype(w)>>) {
          workloads::shard(w, index, count);
        }
      },
      workloads::of(s));
}

}  // namespace kvbench::run
