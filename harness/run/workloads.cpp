#include "harness/run/workloads.h"

#include <variant>

namespace kvbench::run {

std::unique_ptr<CallSource> make_source(const scenario::Scenario& s, const Clock& wall_clock,
                                        const std::string& run_id) {
  return std::visit([&](const auto& w) { return workloads::make_source(s, w, wall_clock, run_id); },
                    s.workload);
}

}  // namespace kvbench::run
