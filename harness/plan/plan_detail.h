#pragma once
// Internal to the planner: the pieces the plain plan and the variant (ABBA) plan share.

#include "harness/core/random.h"
#include "harness/plan/plan.h"

namespace kvbench::plan::detail {

// Every server configuration (num_ctx x cache_type), in the scenario's order, without variant.
std::vector<ServerConfig> configs_of(const scenario::Scenario& s);

// The scenario's workload's part in the plan, reached through the table of workloads (defined
// with it, in workloads/plan_calls.cpp).
// The server slot levels (-np) it runs at.
std::vector<int> workload_slot_levels(const scenario::Scenario& s);
// Appends a block's warm-up calls, probes and shuffled rounds (seq not yet set).
void fill_block(Block& b, const scenario::Scenario& s, Rng& rng);

// The seed of block set `set` (SplitMix64 of the scenario's seed and the set): it decorrelates
// neighbouring sets, and a set's blocks depend on nothing after it, so adding sets keeps the
// earlier ones as they were.
std::uint64_t set_seed(std::uint64_t seed, int set);

// Numbers every call of the plan in order (seq) and links the two reads of each pair.
void number_calls(Plan& plan);

// The plan of a scenario with variants: block_repeats counterbalanced sets; in each set every
// configuration (in a shuffled order) runs the variants forward and then reversed (A B B A,
// A B C C B A). Set k draws from its own generator, seeded from (seed, k), so the first k sets
// are the same whatever block_repeats is.
Plan make_variant_plan(const scenario::Scenario& s);

}  // namespace kvbench::plan::detail
