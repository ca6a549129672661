#include "harness/gate/loop.h"

#include <algorithm>
#include <cmath>

namespace kvbench::gate {

int planned_looks(int sets, int max_sets) {
  return 1 + std::max(0, max_sets - sets);
}

std::optional<int> sets_to_decide(const stats::GateResult& r, int sets) {
  const double gap = std::abs(std::log1p(r.margin) - r.slowdown);
  const double reach = r.t_critical * r.se;
  if (!(gap > 0) || !(reach > 0) || sets < 1) {
    return std::nullopt;
  }
  const double factor = (reach / gap) * (reach / gap);
  const double needed = std::ceil(static_cast<double>(sets) * factor);
  if (!std::isfinite(needed) || needed > 1e6) {
    return std::nullopt;
  }
  return std::max(sets + 1, static_cast<int>(needed));
}

scenario::GateConfig spend_alpha(scenario::GateConfig config, int looks) {
  config.alpha /= std::max(1, looks);
  return config;
}

LoopResult gate_until_decided(int sets, int max_sets, const std::function<RunGate()>& gate_now,
                              const std::function<void()>& extend) {
  LoopResult out;
  out.sets = sets;
  out.gate = gate_now();
  while (out.gate.overall == stats::Verdict::inconclusive && out.sets < max_sets) {
    extend();
    ++out.sets;
    ++out.extensions;
    out.gate = gate_now();
  }
  return out;
}

}  // namespace kvbench::gate
