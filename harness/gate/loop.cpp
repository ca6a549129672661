#include "harness/gate/loop.h"

#include <algorithm>

namespace kvbench::gate {

int planned_looks(int sets, int max_sets) {
  return 1 + std::max(0, max_sets - sets);
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
