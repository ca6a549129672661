#include "harness/run/workloads.h"

#include "harness/run/conversation_source.h"
#include "harness/run/sweep_source.h"

namespace kvbench::run {

namespace {

template <typename Source>
std::unique_ptr<CallSource> make(const scenario::Scenario& s, const Clock& wall_clock,
                                 const std::string& run_id) {
  return std::make_unique<Source>(s, wall_clock, run_id);
}

struct Workload {
  bool (*chosen)(const scenario::Scenario&);
  std::unique_ptr<CallSource> (*make)(const scenario::Scenario&, const Clock&, const std::string&);
};

// The first whose `chosen` holds; the prompt sweep, last, is the default.
constexpr Workload kWorkloads[] = {
    {[](const scenario::Scenario& s) { return s.conversation.active(); },
     make<ConversationSource>},                                           // conversation
    {[](const scenario::Scenario&) { return true; }, make<SweepSource>},  // prompt sweep
};

}  // namespace

std::unique_ptr<CallSource> make_source(const scenario::Scenario& s, const Clock& wall_clock,
                                        const std::string& run_id) {
  for (const auto& w : kWorkloads) {
    if (w.chosen(s)) {
      return w.make(s, wall_clock, run_id);
    }
  }
  return nullptr;  // unreachable: the sweep is always chosen
}

}  // namespace kvbench::run
