#pragma once
// Synthetic traces from the trace engine: groups of conversations behind shared system prompts,
// in the Mooncake format, so that "when does reuse collapse" is one sweep over the working set.
//
// Group g has a system prompt of `system_tokens`; each of its `per_group` conversations takes
// `turns` turns, turn k sending the system prompt and k questions of `question_tokens` (the
// conversation so far). Requests come one every `gap_ms`: a group is drawn with probability
// proportional to 1 / rank^zipf among the groups with turns left, then one of its conversations
// with turns left, uniformly, which sends its next turn. A whole block of a prompt is the same
// block wherever it recurs (a system block in its group, a conversation block in its
// conversation); a partial last block is the request's own. With `working_set`, the number of
// groups is chosen so that their system prompts take working_set x capacity_blocks blocks.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>

#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads::trace {

struct SynthOptions {
  int groups = 8;
  int per_group = 4;
  int system_tokens = 2048;
  int question_tokens = 128;
  int turns = 1;
  double zipf = 0;
  int block_tokens = 512;
  int output_tokens = 32;
  double gap_ms = 100;
  std::optional<double> working_set;           // a multiple of capacity_blocks
  std::optional<std::size_t> capacity_blocks;  // needed with working_set
  std::uint64_t seed = 1;
};

// The trace, its ids numbered from 0 in order of first use. Bad options throw InputError naming
// the option (--working-set without --capacity-blocks, a system prompt shorter than a block with
// --working-set, counts below 1).
Trace synth_trace(const SynthOptions& o);

// The groups a synthetic trace has: `groups`, or the number --working-set asks for.
int synth_groups(const SynthOptions& o);

// Writes `t` as Mooncake JSON Lines (timestamp in whole ms, input_length, output_length,
// hash_ids).
void write_mooncake(std::ostream& out, const Trace& t);

}  // namespace kvbench::workloads::trace
