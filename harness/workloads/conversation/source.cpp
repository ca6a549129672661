#include "harness/workloads/conversation/source.h"

#include <fmt/format.h>

#include "harness/workloads/conversation/spec.h"

namespace kvbench::run {

ConversationSource::ConversationSource(const scenario::Scenario& s,
                                       const workloads::Conversation& conv, const Clock& wall_clock,
                                       std::string run_id)
    : conv_(conv), sweep_(s, wall_clock, run_id), turns_(s, conv) {
  turns_.set_run_id(std::move(run_id));
}

void ConversationSource::restore(const std::vector<CallRecord>& recorded) {
  turns_.restore(recorded);
}

void ConversationSource::reset(const plan::Block& block, backend::Backend& be,
                               const std::vector<int>& slot0) {
  sweep_.reset(block, be, slot0);
  turns_.reset_slots(slot0);
}

CallRecord ConversationSource::unsent(const plan::PlannedCall& call,
                                      const plan::Block& block) const {
  return sweep_.unsent(call, block);
}

PreparedCall ConversationSource::prepare(const plan::PlannedCall& call) {
  if (!workloads::turn_of(call)) {
    return sweep_.prepare(call);
  }
  return turns_.prepare(sweep_.records(), sweep_.backend(), call, sweep_.block());
}

std::optional<int> ConversationSource::lane(const plan::PlannedCall& call) const {
  if (!workloads::turn_of(call)) {
    return std::nullopt;
  }
  return workloads::turn_of(call)->index;
}

std::optional<Together> ConversationSource::together(const plan::Block& block,
                                                     std::size_t from) const {
  const auto& first = block.calls[from];
  if (!workloads::turn_of(first) || !conv_.concurrent) {
    return std::nullopt;
  }
  // The set's turns, every conversation of it in flight at once.
  std::size_t end = from;
  while (end < block.calls.size() && workloads::turn_of(block.calls[end]) &&
         workloads::turn_of(block.calls[end])->set == workloads::turn_of(first)->set) {
    ++end;
  }
  const int at_once = workloads::turn_of(first)->conversations;
  return Together{end, conv_.slots, true, {}, fmt::format("{} conversations at once", at_once)};
}

double ConversationSource::wait_s(const plan::PlannedCall& call, Nanos now) const {
  return turns_.wait_s(call, sweep_.block(), now);
}

void ConversationSource::waited(CallRecord& r, double ms) const {
  if (auto* turn = workloads::turn_record(r)) {
    turn->wait_ms = ms;
  } else {
    r.queue_ms = ms;
  }
}

void ConversationSource::expect(PreparedCall& p, std::optional<int> slot) {
  if (workloads::turn_of(p.call)) {
    turns_.expect(p, sweep_.backend().capabilities());  // its slot is its conversation's
    return;
  }
  sweep_.expect(p, slot);
  turns_.slot_read(p.spec.slot, p.ids);
}

void ConversationSource::finish(PreparedCall& p, backend::CallResult res) {
  if (!workloads::turn_of(p.call)) {
    sweep_.finish(p, std::move(res));
    return;
  }
  turns_.answered(p, res);
  sweep_.finish(p, std::move(res));
  ConversationTurns::flag(p.record);
}

}  // namespace kvbench::run

namespace kvbench::workloads {

std::unique_ptr<run::CallSource> make_source(const scenario::Scenario& s, const Conversation& w,
                                             const Clock& wall_clock, const std::string& run_id) {
  return std::make_unique<run::ConversationSource>(s, w, wall_clock, run_id);
}

}  // namespace kvbench::workloads
