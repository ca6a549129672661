#pragma once
// How far to trust the run's effects, on three axes and in words (honest-intervals in
// results/README.md). Honest: every interval shown rests on enough independent units, and the
// machine's state does not outlast a round (consecutive rounds' levels correlate by no more than
// 2/sqrt(rounds)). Precise: how wide each headline interval is, the smallest change the run
// resolves and what would narrow it. Structure that biases: an effect that differs between fast
// and slow rounds, a change of the machine's speed that came once and stayed, a shuffle that
// failed. Noise alone makes a run imprecise, never untrustworthy.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/analysis/effects.h"
#include "harness/stats/validity.h"

namespace kvbench::analysis {

struct VerdictAxis {
  bool ok = true;
  std::vector<std::string> findings;  // sentences, each with its numbers
};

// What the run's intervals cover: the next server start on this machine, or this start only.
struct StartCover {
  std::size_t machine = 0;     // relative effects whose interval covers the machine
  std::size_t this_start = 0;  // relative effects whose interval covers this start only
  std::size_t borrowed = 0;    // of `machine`: with a start-to-start component measured before
  double fewest_starts = 0;    // server starts per setting, the fewest an effect rests on
  std::string measured;        // the newest borrowed component's date
};

struct EffectsVerdict {
  bool present = false;  // the run has effects to judge
  StartCover cover;
  VerdictAxis honest;
  VerdictAxis precise;    // ok: every headline slope's interval excludes zero
  VerdictAxis structure;  // ok: nothing found that an interval would not show
};

// `checks` are the call-level rules that speak to trust rather than noise (stats/validity.h:
// failed or too few calls, prompt length confounded with time, throttling); the rules on spread
// and drift are noise, which the intervals hold.
EffectsVerdict judge_effects(const Effects& effects,
                             const std::vector<stats::ValidityReason>& checks = {});

// Whether a validity rule speaks to trust (kept by judge_effects) rather than to noise.
bool speaks_to_trust(const std::string& rule);

void to_json(nlohmann::json& j, const VerdictAxis& a);
void to_json(nlohmann::json& j, const StartCover& c);
void to_json(nlohmann::json& j, const EffectsVerdict& v);

}  // namespace kvbench::analysis
