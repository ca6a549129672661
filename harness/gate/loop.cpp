#include "harness/gate/loop.h"

namespace kvbench::gate {

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
