#pragma once
// What a scenario sends: exactly one workload. This variant is the table of workloads; each has a
// folder of its own (harness/workloads/<name>/) with its settings (spec.h) and, one file per
// layer, how it is parsed (parse.cpp, in the scenario module), planned (plan.cpp), sent
// (source*.cpp, in the run module) and reported (report*.cpp). Every layer reaches a workload
// through std::visit over this variant, so the compiler names any layer a new workload has not
// filled. The first alternative is the default.

#include <variant>

#include "harness/workloads/conversation/spec.h"
#include "harness/workloads/sweep/spec.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::workloads {

using Workload = std::variant<Sweep, Conversation, TraceReplay>;

}  // namespace kvbench::workloads
