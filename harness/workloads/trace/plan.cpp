// The trace workload in the plan layer: one server slot level, and a block's calls: warm-ups,
// then every replayed request in trace order, each a timed call.

#include "harness/plan/plan.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/random.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/trace/planned.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::workloads {

using plan::Block;
using plan::CallKind;
using plan::PairRole;
using plan::PlannedCall;

std::vector<int> slot_levels(const scenario::Scenario& /*s*/, const TraceReplay& t) {
  return {t.slots};
}

// The requests keep their order: it is the trace's, and their reuse depends on it.
void fill_block(Block& b, const scenario::Scenario& s, const TraceReplay& t, Rng& /*rng*/) {
  if (!t.requests) {
    throw InputError(fmt::format("{}: the trace cannot be replayed again without its file: {}",
                                 s.source, t.unread));
  }
  const int warmup_tokens =
      t.requests->requests.empty() ? 16 : std::max(16, t.requests->block_tokens);
  for (int w = 0; w < s.warmup; ++w) {
    b.calls.push_back(
        {0, b.index, -1, CallKind::warmup, warmup_tokens, -1, PairRole::none, {}, {}});
  }
  const auto& requests = t.requests->requests;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    PlannedCall c{0,  b.index, 0, CallKind::timed, requests[i].input_tokens, -1, PairRole::none,
                  {}, {}};
    c.part = plan::CallPart(PlannedRequest{static_cast<int>(i)});
    b.calls.push_back(c);
  }
}

void write_part(const PlannedRequest& r, nlohmann::json& call) {
  call["request"] = r.index;
}

std::string describe_part(const PlannedRequest& r, int prompt_tokens) {
  return fmt::format("  trace request {} ({} tokens)\n", r.index, prompt_tokens);
}

void record_part(const PlannedRequest& /*r*/, CallRecord& /*record*/) {}

}  // namespace kvbench::workloads
