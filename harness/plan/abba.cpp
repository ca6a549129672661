// Counterbalanced block sets of server variants (ABBA): a linear drift over a set adds the same
// to every variant, so it cancels out of their comparison.

#include "harness/plan/plan_detail.h"

namespace kvbench::plan::detail {

std::uint64_t set_seed(std::uint64_t seed, int set) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(set) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

namespace {

// The variant names of one configuration's blocks in a set: forward, then reversed.
std::vector<std::string> abba_order(const scenario::Scenario& s) {
  std::vector<std::string> out;
  for (const auto& v : s.variants) {
    out.push_back(v.name);
  }
  for (auto it = s.variants.rbegin(); it != s.variants.rend(); ++it) {
    out.push_back(it->name);
  }
  return out;
}

}  // namespace

Plan make_variant_plan(const scenario::Scenario& s) {
  Plan plan;
  plan.seed = s.seed;
  const auto order = abba_order(s);
  const int half = static_cast<int>(s.variants.size());
  for (int set = 0; set < s.block_repeats; ++set) {
    Rng rng(set_seed(s.seed, set));
    auto configs = configs_of(s);
    kvbench::shuffle(configs.begin(), configs.end(), rng);
    for (const auto& cfg : configs) {
      for (int i = 0; i < static_cast<int>(order.size()); ++i) {
        Block b;
        b.index = static_cast<int>(plan.blocks.size());
        b.replica = 2 * set + (i < half ? 0 : 1);
        b.config = cfg;
        b.config.variant = order[static_cast<std::size_t>(i)];
        fill_block(b, s, rng);
        plan.blocks.push_back(std::move(b));
      }
    }
  }
  number_calls(plan);
  return plan;
}

}  // namespace kvbench::plan::detail
