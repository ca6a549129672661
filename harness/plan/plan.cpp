#include "harness/plan/plan.h"

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "harness/core/random.h"
#include "harness/plan/plan_detail.h"

namespace kvbench::plan {

std::string ServerConfig::label() const {
  std::string out = fmt::format("ctx={} kv={}", num_ctx, cache_type);
  if (slots != 1) {
    out += fmt::format(" np={}", slots);
  }
  if (batch_size) {
    out += fmt::format(" batch={}", *batch_size);
  }
  if (ubatch_size) {
    out += fmt::format(" ubatch={}", *ubatch_size);
  }
  return variant.empty() ? out : variant + " " + out;
}

std::size_t Plan::call_count() const {
  std::size_t n = 0;
  for (const auto& b : blocks) {
    n += b.calls.size();
  }
  return n;
}

std::size_t Plan::timed_count() const {
  std::size_t n = 0;
  for (const auto& b : blocks) {
    n += static_cast<std::size_t>(std::count_if(
        b.calls.begin(), b.calls.end(), [](const auto& c) { return c.kind == CallKind::timed; }));
  }
  return n;
}

std::vector<ServerConfig> detail::configs_of(const scenario::Scenario& s) {
  std::vector<ServerConfig> out;
  const std::vector<int> slot_levels = detail::workload_slot_levels(s);
  // A batch size that is no factor is one level, absent.
  const auto levels = [](const std::vector<int>& factor) {
    std::vector<std::optional<int>> given(factor.begin(), factor.end());
    return given.empty() ? std::vector<std::optional<int>>{std::nullopt} : given;
  };
  for (int ctx : s.factors.num_ctx) {
    for (const auto& kv : s.factors.cache_type) {
      for (int slots : slot_levels) {
        for (const auto& batch : levels(s.factors.batch_size)) {
          for (const auto& ubatch : levels(s.factors.ubatch_size)) {
            out.push_back({ctx, kv, "", slots, batch, ubatch});
          }
        }
      }
    }
  }
  return out;
}

void detail::number_calls(Plan& plan) {
  int seq = 0;
  for (auto& b : plan.blocks) {
    for (std::size_t i = 0; i < b.calls.size(); ++i) {
      auto& c = b.calls[i];
      c.seq = seq++;
      if (c.role != PairRole::none) {
        c.pair = c.role == PairRole::cold ? c.seq : b.calls[i - 1].seq;
      }
    }
  }
}

Plan make_plan(const scenario::Scenario& s) {
  if (!s.variants.empty()) {
    return detail::make_variant_plan(s);
  }
  Plan plan;
  plan.seed = s.seed;
  const auto configs = detail::configs_of(s);
  // Each replica pass holds every configuration once, shuffled (blocked randomization of
  // whole-plot units). The first pass draws from the scenario's seed, each later one from its
  // own (detail::set_seed), so more passes (precision on demand) leave the earlier ones as they
  // were.
  for (int rep = 0; rep < s.block_repeats; ++rep) {
    Rng rng(rep == 0 ? s.seed : detail::set_seed(s.seed, rep));
    std::vector<ServerConfig> order = configs;
    kvbench::shuffle(order.begin(), order.end(), rng);
    const std::size_t first = plan.blocks.size();
    for (const auto& cfg : order) {
      Block b;
      b.index = static_cast<int>(plan.blocks.size());
      b.replica = rep;
      b.config = cfg;
      plan.blocks.push_back(std::move(b));
    }
    for (std::size_t i = first; i < plan.blocks.size(); ++i) {
      detail::fill_block(plan.blocks[i], s, rng);
    }
  }
  detail::number_calls(plan);
  return plan;
}

nlohmann::json to_json(const Plan& p) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : p.blocks) {
    nlohmann::json calls = nlohmann::json::array();
    for (const auto& c : b.calls) {
      nlohmann::json call = {{"seq", c.seq},
                             {"round", c.round},
                             {"kind", to_string(c.kind)},
                             {"prompt_tokens", c.prompt_tokens}};
      if (c.edit) {
        call["pair"] = c.pair;
        call["role"] = to_string(c.role);
        call["edit_position"] = c.edit->to_json();
      }
      c.part.write(call);
      calls.push_back(call);
    }
    nlohmann::json block = {{"index", b.index},
                            {"replica", b.replica},
                            {"num_ctx", b.config.num_ctx},
                            {"cache_type", b.config.cache_type},
                            {"calls", calls}};
    if (!b.config.variant.empty()) {
      block["variant"] = b.config.variant;
    }
    if (b.config.batch_size) {
      block["batch_size"] = *b.config.batch_size;
    }
    if (b.config.ubatch_size) {
      block["ubatch_size"] = *b.config.ubatch_size;
    }
    if (b.config.slots != 1) {
      block["slots"] = b.config.slots;
    }
    blocks.push_back(std::move(block));
  }
  return {{"seed", p.seed}, {"blocks", blocks}};
}

std::string describe(const Plan& p) {
  std::string out = fmt::format("plan: {} blocks, {} calls ({} timed), seed {}\n", p.blocks.size(),
                                p.call_count(), p.timed_count(), p.seed);
  for (const auto& b : p.blocks) {
    out += fmt::format("block {} ({}, start {}):\n", b.index, b.config.label(), b.replica + 1);
    for (const auto& c : b.calls) {
      out += fmt::format("  #{:<4} {:<6} round {:>2}", c.seq, to_string(c.kind),
                         c.round < 0 ? std::string("-") : std::to_string(c.round));
      if (c.part) {  // its workload says what it is
        out += c.part.describe(c.prompt_tokens);
        continue;
      }
      out += fmt::format("  prompt_tokens {}", c.prompt_tokens);
      out += c.edit
                 ? fmt::format("  pair {} {} edit {}\n", c.pair, to_string(c.role), c.edit->label())
                 : "\n";
    }
  }
  return out;
}

}  // namespace kvbench::plan
