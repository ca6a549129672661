#pragma once
// How far to trust the run's effects, on three axes and in words (honest-intervals in
// statistics.md). Honest: every interval shown rests on enough independent units, and the
// machine's state does not outlast a round (consecutive rounds' levels correlate by no more than
// 2/sqrt(rounds)). Precise: how wide each headline interval is, the smallest change the run
// resolves and what would narrow it. Structure that biases: an effect that differs between fast
// and slow rounds. Noise alone makes a run imprecise, never untrustworthy.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/effects.h"

namespace kvbench::analysis {

struct VerdictAxis {
  bool ok = true;
  std::vector<std::string> findings;  // sentences, each with its numbers
};

struct EffectsVerdict {
  bool present = false;  // the run has effects to judge
  VerdictAxis honest;
  VerdictAxis precise;    // ok: every headline slope's interval excludes zero
  VerdictAxis structure;  // ok: nothing found that an interval would not show
};

EffectsVerdict judge_effects(const Effects& effects);

void to_json(nlohmann::json& j, const VerdictAxis& a);
void to_json(nlohmann::json& j, const EffectsVerdict& v);

}  // namespace kvbench::analysis
