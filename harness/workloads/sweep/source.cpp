#include "harness/workloads/sweep/source.h"

#include "harness/workloads/sweep/spec.h"

namespace kvbench::run {

SweepSource::SweepSource(const scenario::Scenario& s, const Clock& wall_clock, std::string run_id)
    : records_(s, wall_clock) {
  records_.set_run_id(std::move(run_id));
}

void SweepSource::reset(const plan::Block& block, backend::Backend& be,
                        const std::vector<int>& slot0) {
  block_ = &block;
  be_ = &be;
  held_.clear();
  held_[0] = slot0;
}

CallRecord SweepSource::unsent(const plan::PlannedCall& call, const plan::Block& block) const {
  return records_.base(call, block);
}

PreparedCall SweepSource::prepare(const plan::PlannedCall& call) {
  return records_.prepare(*be_, call, *block_);
}

void SweepSource::expect(PreparedCall& p, std::optional<int> slot) {
  // A slot's reuse is the longest common prefix with what it read last, less the one token a
  // server always re-reads, in the server's cache rule (see predicted_reuse).
  const bool ids = be_->capabilities().token_ids;
  if (!slot) {
    p.record.expected_cache_n = predicted_reuse(p, ids, nullptr);
    return;
  }
  auto& held = held_[*slot];
  p.record.expected_cache_n = predicted_reuse(p, ids, &held);
  held = p.ids;
}

void SweepSource::finish(PreparedCall& p, backend::CallResult res) {
  records_.finish(p, std::move(res));
}

}  // namespace kvbench::run

namespace kvbench::workloads {

std::unique_ptr<run::CallSource> make_source(const scenario::Scenario& s, const Sweep& /*w*/,
                                             const Clock& wall_clock, const std::string& run_id) {
  return std::make_unique<run::SweepSource>(s, wall_clock, run_id);
}

}  // namespace kvbench::workloads
