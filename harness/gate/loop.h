#pragma once
// The undecided-gate loop of results/README.md ("CI performance gate"): gate, and while the verdict
// is INCONCLUSIVE and the run has fewer than max_sets counterbalanced block sets, add one set and
// gate again. Each look may decide, so the level is spent over the looks the loop may take, fixed
// before the first (Bonferroni: α / looks at each, whose sum keeps the chance of a false FAIL, and
// of a false PASS, at α however the looks fall).

#include <functional>
#include <optional>

#include "harness/gate/decision.h"

namespace kvbench::gate {

struct LoopResult {
  RunGate gate;
  int sets = 0;        // block sets in the run at the end
  int extensions = 0;  // sets added by the loop
};

// The looks a run of `sets` sets may take up to `max_sets`: 1 + the sets the loop may add.
int planned_looks(int sets, int max_sets);

// `config` with its α spent over `looks` (α / looks).
scenario::GateConfig spend_alpha(scenario::GateConfig config, int looks);

// The sets a still INCONCLUSIVE entry would need, if its estimate held, for its bound to clear the
// margin (its SE shrinks as 1/sqrt(sets), its t quantile kept): PASS where the slowdown lies below
// the margin, FAIL where above. Nothing where the estimate sits on the margin (no number of sets
// decides it) or the entry has no numbers.
std::optional<int> sets_to_decide(const stats::GateResult& r, int sets);

// Calls `gate_now` once, then `extend` (which adds one block set) and `gate_now` again while the
// overall verdict is INCONCLUSIVE and sets < max_sets. `sets` is the run's sets at the start.
LoopResult gate_until_decided(int sets, int max_sets, const std::function<RunGate()>& gate_now,
                              const std::function<void()>& extend);

}  // namespace kvbench::gate
