// The prompt sweep in the plan layer: the concurrency's slot levels, and a block's calls.

#include "harness/plan/plan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "harness/core/random.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/sweep/spec.h"

namespace kvbench::workloads {

using plan::Block;
using plan::CallKind;
using plan::PairRole;

std::vector<int> slot_levels(const scenario::Scenario& s, const Sweep& /*w*/) {
  return s.concurrency.slot_levels();
}

// A block: warm-up calls at the smallest prompt length, then `repeats` rounds, each holding every
// prompt length (with each edit position, as a pair) once in a shuffled order, and the drift
// probes between them.
void fill_block(Block& b, const scenario::Scenario& s, const Sweep& /*w*/, Rng& rng) {
  const int smallest =
      *std::min_element(s.factors.prompt_tokens.begin(), s.factors.prompt_tokens.end());
  for (int w = 0; w < s.warmup; ++w) {
    b.calls.push_back({0, b.index, -1, CallKind::warmup, smallest, -1, PairRole::none, {}, {}});
  }
  // A unit of a round: one prompt length, with an edit position when the trial is a pair.
  using Unit = std::pair<int, std::optional<scenario::EditPosition>>;
  std::vector<Unit> units;
  for (int p : s.factors.prompt_tokens) {
    if (s.factors.edit_position.empty()) {
      units.emplace_back(p, std::nullopt);
    }
    for (const auto& e : s.factors.edit_position) {
      units.emplace_back(p, e);
    }
  }
  const int every = s.probes.every;
  const auto probe = [&] {
    b.calls.push_back(
        {0, b.index, -1, CallKind::probe, s.probes.prompt_tokens, -1, PairRole::none, {}, {}});
  };
  if (every > 0) {
    probe();
  }
  int since_probe = 0;
  for (int r = 0; r < s.repeats; ++r) {
    std::vector<Unit> round = units;
    kvbench::shuffle(round.begin(), round.end(), rng);
    for (const auto& [p, edit] : round) {
      if (!edit) {
        b.calls.push_back({0, b.index, r, CallKind::timed, p, -1, PairRole::none, {}, {}});
      } else {
        b.calls.push_back({0, b.index, r, CallKind::timed, p, 0, PairRole::cold, edit, {}});
        b.calls.push_back({0, b.index, r, CallKind::timed, p, 0, PairRole::edited, edit, {}});
      }
      // A probe never comes between the two reads of a pair.
      if (every > 0 && ++since_probe == every) {
        probe();
        since_probe = 0;
      }
    }
  }
  if (every > 0 && since_probe > 0) {
    probe();
  }
}

}  // namespace kvbench::workloads
