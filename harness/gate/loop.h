#pragma once
// The undecided-gate loop of statistics.md §5.4: gate, and while the verdict is INCONCLUSIVE and
// the run has fewer than max_sets counterbalanced block sets, add one set and gate again.

#include <functional>

#include "harness/gate/decision.h"

namespace kvbench::gate {

struct LoopResult {
  RunGate gate;
  int sets = 0;        // block sets in the run at the end
  int extensions = 0;  // sets added by the loop
};

// Calls `gate_now` once, then `extend` (which adds one block set) and `gate_now` again while the
// overall verdict is INCONCLUSIVE and sets < max_sets. `sets` is the run's sets at the start.
LoopResult gate_until_decided(int sets, int max_sets, const std::function<RunGate()>& gate_now,
                              const std::function<void()>& extend);

}  // namespace kvbench::gate
