// Synthetic traces (synth.h): groups of conversations behind shared system prompts.

#include "harness/workloads/trace/synth.h"

#include <cmath>
#include <map>
#include <ostream>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "harness/core/random.h"

namespace kvbench::workloads::trace {

namespace {

constexpr double kMostRequests = 1e7;

void check_options(const SynthOptions& o) {
  const auto at_least_one = [](int v, const char* name) {
    if (v < 1) {
      throw InputError(fmt::format("{} {}: expected 1 or more", name, v));
    }
  };
  at_least_one(o.groups, "--groups");
  at_least_one(o.per_group, "--per-group");
  at_least_one(o.turns, "--turns");
  at_least_one(o.block_tokens, "--block-tokens");
  at_least_one(o.question_tokens, "--question-tokens");
  at_least_one(o.output_tokens, "--output-tokens");
  if (o.system_tokens < 0 || o.zipf < 0 || o.gap_ms < 0) {
    throw InputError("--system-tokens, --zipf and --gap-ms: expected 0 or more");
  }
  if (static_cast<double>(o.groups) * o.per_group * o.turns > kMostRequests) {
    throw InputError(
        fmt::format("--groups x --per-group x --turns: at most {} requests", kMostRequests));
  }
  if (o.working_set && (!o.capacity_blocks || *o.capacity_blocks == 0)) {
    throw InputError("--working-set is a multiple of --capacity-blocks: give --capacity-blocks");
  }
  if (o.working_set && (*o.working_set <= 0 || o.system_tokens < o.block_tokens)) {
    throw InputError(
        "--working-set: expected a multiple > 0, and a system prompt of at least one block "
        "(--system-tokens >= --block-tokens): the working set is counted in system blocks");
  }
}

// Ids numbered in order of first use, for blocks named by (owner kind, owner, index).
class BlockIds {
 public:
  std::uint64_t of(int kind, long long owner, long long index) {
    const auto [it, added] = ids_.try_emplace(std::tuple(kind, owner, index), ids_.size());
    return it->second;
  }

 private:
  std::map<std::tuple<int, long long, long long>, std::uint64_t> ids_;
};

}  // namespace

int synth_groups(const SynthOptions& o) {
  if (!o.working_set) {
    return o.groups;
  }
  const double system_blocks = o.system_tokens / o.block_tokens;
  const double wanted = *o.working_set * static_cast<double>(*o.capacity_blocks) / system_blocks;
  if (wanted * o.per_group * o.turns > kMostRequests) {
    throw InputError(
        fmt::format("--working-set {} of --capacity-blocks {}: {:.0f} groups, more "
                    "than {} requests in all",
                    *o.working_set, *o.capacity_blocks, wanted, kMostRequests));
  }
  return std::max(1, static_cast<int>(std::lround(wanted)));
}

Trace synth_trace(const SynthOptions& o) {
  check_options(o);
  const int groups = synth_groups(o);
  Rng rng(o.seed);
  std::vector<double> weight(static_cast<std::size_t>(groups));
  for (int g = 0; g < groups; ++g) {
    weight[static_cast<std::size_t>(g)] = 1.0 / std::pow(g + 1, o.zipf);
  }
  // Turns left per conversation, conversations numbered group by group.
  std::vector<int> left(static_cast<std::size_t>(groups * o.per_group), o.turns);
  std::vector<int> group_left(static_cast<std::size_t>(groups), o.per_group * o.turns);
  Trace t;
  t.format = Format::mooncake;
  t.block_tokens = o.block_tokens;
  BlockIds ids;
  const long long total = static_cast<long long>(groups) * o.per_group * o.turns;
  for (long long n = 0; n < total; ++n) {
    double sum = 0;
    for (int g = 0; g < groups; ++g) {
      sum += group_left[static_cast<std::size_t>(g)] > 0 ? weight[static_cast<std::size_t>(g)] : 0;
    }
    double u = rng.uniform() * sum;
    int g = 0;
    for (; g < groups - 1; ++g) {
      const double w =
          group_left[static_cast<std::size_t>(g)] > 0 ? weight[static_cast<std::size_t>(g)] : 0;
      if (u < w) {
        break;
      }
      u -= w;
    }
    while (group_left[static_cast<std::size_t>(g)] == 0) {  // rounding at the end of the sum
      --g;
    }
    std::vector<int> open;
    for (int c = 0; c < o.per_group; ++c) {
      if (left[static_cast<std::size_t>(g * o.per_group + c)] > 0) {
        open.push_back(g * o.per_group + c);
      }
    }
    const int conv = open[rng.below(open.size())];
    const int turn = o.turns - left[static_cast<std::size_t>(conv)] + 1;
    --left[static_cast<std::size_t>(conv)];
    --group_left[static_cast<std::size_t>(g)];
    Request r;
    r.due_ms = static_cast<double>(n) * o.gap_ms;
    r.input_tokens = o.system_tokens + turn * o.question_tokens;
    r.output_tokens = o.output_tokens;
    r.origin = fmt::format("request {}", n);
    const long long whole = r.input_tokens / o.block_tokens;
    const long long blocks = (r.input_tokens + o.block_tokens - 1) / o.block_tokens;
    for (long long j = 0; j < blocks; ++j) {
      if (j >= whole) {
        r.blocks.push_back(ids.of(2, n, j));  // a partial last block: this request's own
      } else if ((j + 1) * o.block_tokens <= o.system_tokens) {
        r.blocks.push_back(ids.of(0, g, j));
      } else {
        r.blocks.push_back(ids.of(1, conv, j));
      }
    }
    t.requests.push_back(std::move(r));
  }
  return t;
}

void write_mooncake(std::ostream& out, const Trace& t) {
  for (const auto& r : t.requests) {
    out << nlohmann::json{{"timestamp", std::llround(r.due_ms)},
                          {"input_length", r.input_tokens},
                          {"output_length", r.output_tokens},
                          {"hash_ids", r.blocks}}
               .dump()
        << "\n";
  }
}

}  // namespace kvbench::workloads::trace
