#pragma once
// What a scenario sends: exactly one workload. This variant is the table of workloads; each has a
// folder of its own (harness/workloads/<name>/) with its settings (spec.h) and, one file per
// layer, how it is parsed (parse.cpp, in the scenario module), planned (plan.cpp), sent
// (source*.cpp, in the run module) and reported (report*.cpp). Every layer reaches a workload
// through std::visit over this variant, so the compiler names any layer a new workload has not
// filled. The first alternative is the default.

#include <any>
#include <type_traits>
#include <variant>

#include "harness/scenario/scenario.h"
#include "harness/workloads/conversation/spec.h"
#include "harness/workloads/sweep/spec.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::workloads {

using Workload = std::variant<Sweep, Conversation, TraceReplay>;

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
