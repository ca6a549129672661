#pragma once
// A trace replay's part of a call record (core/record_part.h), under the record's "trace". Its
// reuse is known three ways: what an infinite cache would reuse, what the server's policy predicts
// (also the record's expected_cache_n) and what the server reported (server.cache_n).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/describe.h"
#include "harness/core/record.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::workloads {

struct ReplayRecord {
  // Its fields, described once (core/describe.h); those with columns first.
  static const std::vector<describe::Field<ReplayRecord>>& fields();
  static constexpr std::string_view kKey = TraceReplay::kName;
  int index = 0;                  // among the requests replayed, in trace order
  double due_ms = 0;              // its (scaled) arrival, ms after the first request's
  std::optional<double> sent_ms;  // its send, ms after the first request's send
  int input_tokens = 0;
  int output_tokens = 0;
  int blocks = 0;        // its prompt's block ids
  int block_tokens = 0;  // tokens a block holds
  // The longest prefix of its blocks sent earlier in this replay (in the block), in tokens and in
  // blocks: predicted_infinite_tokens.
  int infinite_tokens = 0;
  int infinite_blocks = 0;
  std::optional<int> predicted_tokens;  // the server's policy; absent: no model of it
  std::optional<int> predicted_slot;    // the slot the policy expects the server to pick
  // The distinct blocks this replay sent since the server started, this request's included.
  std::optional<long long> working_set_blocks;
  // Tokens the server read before the prompt's first block (BOS and the chat template's start,
  // the same for every request). predicted_tokens counts as the server does (cache_n); the
  // report's reuse counts the prompt's own tokens, these left out.
  int lead_tokens = 0;
  // Sent as text (kinds that take no token ids): the text re-tokenized to the planned blocks, or
  // not (materialized false); absent for token-id prompts.
  std::optional<bool> materialized;
  std::string predicted_from;  // "slot", "host_cache", "blocks" or "" (nothing reused)
  std::string loss;            // policy below infinite: "capacity" or "placement"; "" none
  std::string mismatch;        // reported against policy: "materialization", "evicted",
                               // "over_report" or "unexplained"; "" none
};

// The record's replayed request; nullptr on a call that is not one.
inline const ReplayRecord* replay_record(const CallRecord& r) {
  return r.part.get<ReplayRecord>();
}
inline ReplayRecord* replay_record(CallRecord& r) {
  return r.part.get<ReplayRecord>();
}

}  // namespace kvbench::workloads
