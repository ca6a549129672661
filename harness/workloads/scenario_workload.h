#pragma once
// A scenario's workload: Scenario::workload holds one of the table's (workload.h).

#include <any>
#include <variant>

#include "harness/scenario/scenario.h"
#include "harness/workloads/workload.h"

namespace kvbench::workloads {

// The scenario's workload (Scenario::workload holds a Workload; empty is the first).
inline const Workload& of(const scenario::Scenario& s) {
  static const Workload kFirst;
  const auto* w = std::any_cast<Workload>(&s.workload);
  return w != nullptr ? *w : kFirst;
}
inline Workload& of(scenario::Scenario& s) {
  if (!s.workload.has_value()) {
    s.workload = Workload{};
  }
  return std::any_cast<Workload&>(s.workload);
}

// The scenario's workload as W, or nullptr when it sends another.
template <typename W>
const W* as(const scenario::Scenario& s) {
  return std::get_if<W>(&of(s));
}
template <typename W>
W* as(scenario::Scenario& s) {
  return std::get_if<W>(&of(s));
}

}  // namespace kvbench::workloads
