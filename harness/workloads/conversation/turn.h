#pragma once
// The conversation's part of a planned call (plan/call_part.h): the call's place in its
// conversation.

#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/plan/plan.h"

namespace kvbench::workloads {

struct Turn {
  int conversation = 0;   // the conversation, numbered over the block's sets from 0
  int set = 0;            // the block's set it belongs to
  int conversations = 1;  // how many conversations take turns in its set (the level)
  int index = 0;          // its place in the set's round-robin; its slot is index mod slots
  int turn = 1;           // 1-based
  bool reuse = true;      // false: reuse defeated (a fresh first line every turn)
  bool operator==(const Turn&) const = default;
};

// Its part in the plan (defined with the conversation's plan): its fields in the plan's JSON,
// its line in the listing, and the turn its record carries.
void write_part(const Turn& t, nlohmann::json& call);
std::string describe_part(const Turn& t, int prompt_tokens);
void record_part(const Turn& t, CallRecord& r);

// The planned call's turn; nullptr on another call (a warm-up).
inline const Turn* turn_of(const plan::PlannedCall& c) {
  return c.part.as<Turn>();
}

}  // namespace kvbench::workloads
