#pragma once
// The trace's part of a planned call (plan/call_part.h): which request it replays.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/plan/plan.h"

namespace kvbench::workloads {

struct PlannedRequest {
  int index = 0;  // among the requests replayed, in trace order
  bool operator==(const PlannedRequest&) const = default;
};

// Its part in the plan (defined with the trace's plan): its index in the plan's JSON and its line
// in the listing; the record's replay is filled by the trace's source.
void write_part(const PlannedRequest& r, nlohmann::json& call);
std::string describe_part(const PlannedRequest& r, int prompt_tokens);
void record_part(const PlannedRequest& r, CallRecord& record);

// The request a planned call replays; nothing on another call (a warm-up).
inline std::optional<int> request_of(const plan::PlannedCall& c) {
  const auto* r = c.part.as<PlannedRequest>();
  return r != nullptr ? std::optional<int>(r->index) : std::nullopt;
}

}  // namespace kvbench::workloads
