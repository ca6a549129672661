#pragma once
// The plan: a scenario expanded into server blocks and calls, shuffled with the scenario's seed.
// Blocked randomization: within a block, each round holds every prompt length (times every edit
// position, as adjacent cold/edited pairs) once, in a shuffled order; the order of the blocks
// (server configurations) is shuffled too.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/plan/call_part.h"
#include "harness/scenario/scenario.h"

namespace kvbench::plan {

// A call's kind and its part in a prefix-reuse pair are the record's vocabulary.
using kvbench::CallKind;
using kvbench::PairRole;

// What a server must be (re)started with.
struct ServerConfig {
  int num_ctx = 0;  // per conversation (per server slot)
  std::string cache_type;
  std::string variant;  // the server variant (scenario "variants"); empty without variants
  int slots = 1;        // conversations in flight at once: the server's -np
  // factors.batch_size and factors.ubatch_size's levels; absent: not a factor (the server's
  // field, or its own default).
  std::optional<int> batch_size = std::nullopt;
  std::optional<int> ubatch_size = std::nullopt;
  // e.g. "ctx=4096 kv=f16", "candidate ctx=4096 kv=f16 np=4", "ctx=4096 kv=f16 batch=512"
  std::string label() const;
  bool operator==(const ServerConfig&) const = default;
};

struct PlannedCall {
  int seq = 0;    // position in the whole run, 0-based
  int block = 0;  // index of its block
  int round = 0;  // round within the block (warm-up calls and probes: -1)
  CallKind kind = CallKind::timed;
  int prompt_tokens = 0;
  // Pairs (factors.edit_position): the cold read comes first and its edited resend right after
  // it in the same block; `pair` is the seq of the cold read, -1 for a single call.
  int pair = -1;
  PairRole role = PairRole::none;
  std::optional<scenario::EditPosition> edit;
  CallPart part;  // its workload's own part (call_part.h), if any
};

struct Block {
  int index = 0;
  int replica = 0;  // 0-based: which start of this configuration (and variant)
  ServerConfig config;
  std::vector<PlannedCall> calls;
};

struct Plan {
  std::uint64_t seed = 0;
  std::vector<Block> blocks;
  std::size_t call_count() const;
  std::size_t timed_count() const;
};

// Expands and shuffles. Same scenario and seed, same plan, always. With server variants the
// blocks come in counterbalanced sets (see make_variant_plan in plan_detail.h).
Plan make_plan(const scenario::Scenario& s);

nlohmann::json to_json(const Plan& p);

// A human-readable listing for `kvbench plan`.
std::string describe(const Plan& p);

}  // namespace kvbench::plan
