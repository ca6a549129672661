// The conversation part of a run's report computed from its calls: the rows per turn, per level
// and of the saving of reuse, the turns that lost their history, and the answers kept.

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/stats/descriptive.h"
#include "harness/workloads/conversation/record.h"
#include "harness/workloads/conversation/report.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

std::string turn_config(int num_ctx, const std::string& cache_type, const std::string& variant) {
  std::string out = fmt::format("ctx={} kv={}", num_ctx, cache_type);
  return variant.empty() ? out : variant + " " + out;
}

std::string turn_config(const CallRecord& r) {
  return turn_config(r.num_ctx, r.cache_type, r.variant);
}

std::optional<double> turn_median(std::vector<double> v) {
  if (v.empty()) {
    return std::nullopt;
  }
  return stats::median(v);
}

bool turn_flagged(const CallRecord& r, std::string_view f) {
  return std::find(r.flags.begin(), r.flags.end(), f) != r.flags.end();
}

// "2-5, 7"
std::string turn_ranges(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) {
      ++j;
    }
    parts.push_back(j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

using TurnKey = std::tuple<std::string, int, bool, int>;  // config, level, reuse, turn
struct TurnAcc {
  std::vector<double> ttft, prompt, reused, history, decode;
  int n = 0, failed = 0, proved = 0, predicted = 0, lost = 0;
};
using LevelKey = std::tuple<std::string, int>;  // config, level
struct LevelAcc {
  int turns = 0, kept = 0;
  double reused = 0, history = 0;
  std::vector<double> reread, ttft;
};
struct AtOnce {
  int max_in_flight = 0;
  std::vector<double> wait;
};
// What the turns add up to, before the rows are made.
struct Tally {
  std::map<TurnKey, TurnAcc> acc;
  std::map<LevelKey, LevelAcc> levels;
  std::map<LevelKey, AtOnce> at_once;
  std::map<std::tuple<int, int, int>, std::vector<int>> lost;  // block, conversation, level
  std::map<std::string, std::vector<double>> final_tokens;
};

// Adds one call (a timed turn, ended) to the tally and to `out`'s counts.
void tally_turn(const CallRecord& r, ConversationReport& out, Tally& tl) {
  const auto* turn = workloads::turn_record(r);
  if (turn == nullptr || r.kind != CallKind::timed || r.outcome == Outcome::aborted) {
    return;
  }
  const auto& t = *turn;
  TurnAcc& a = tl.acc[{turn_config(r), t.conversations, t.reuse, t.turn}];
  if (!r.ok()) {
    ++a.failed;
    return;
  }
  ++a.n;
  if (r.client.ttft_ms) {
    a.ttft.push_back(*r.client.ttft_ms);
  }
  if (r.in_flight) {
    AtOnce& o = tl.at_once[{turn_config(r), t.conversations}];
    o.max_in_flight = std::max(o.max_in_flight, *r.in_flight);
    if (t.wait_ms) {
      o.wait.push_back(*t.wait_ms);
    }
  }
  // The prompt as counted before sending, or as the server counted it (no token ids).
  if (const auto tokens =
          r.prompt_tokens_counted ? r.prompt_tokens_counted : r.server.prompt_total) {
    a.prompt.push_back(*tokens);
    if (t.turn == out.turns && t.reuse) {
      tl.final_tokens[turn_config(r)].push_back(*tokens);
    }
  }
  if (r.server.cache_n) {
    a.reused.push_back(*r.server.cache_n);
  }
  if (t.history_tokens) {
    a.history.push_back(*t.history_tokens);
  }
  if (r.client.decode_tps) {
    a.decode.push_back(*r.client.decode_tps);
  }
  if (r.server.cache_n && r.expected_cache_n) {
    ++a.predicted;
    ++out.predicted;
    if (*r.server.cache_n == *r.expected_cache_n) {
      ++a.proved;
      ++out.proved;
    }
  } else if (r.server.cache_n) {
    ++out.unpredicted;
  }
  if (turn_flagged(r, "history_lost")) {
    ++a.lost;
    ++out.lost;
    tl.lost[{r.block, t.conversation, t.conversations}].push_back(t.turn);
  }
  out.restored += turn_flagged(r, "history_restored") ? 1 : 0;
  out.unexpected += turn_flagged(r, "unexpected_cache_reuse") ? 1 : 0;
  if (t.reuse && t.turn > 1 && t.history_tokens && r.server.cache_n) {
    LevelAcc& l = tl.levels[{turn_config(r), t.conversations}];
    ++l.turns;
    l.history += *t.history_tokens;
    l.reused += std::min(*r.server.cache_n, *t.history_tokens);
    if (*r.server.cache_n >= *t.history_tokens) {
      ++l.kept;
    } else {
      l.reread.push_back(*t.history_tokens - *r.server.cache_n);
    }
    if (r.client.ttft_ms) {
      l.ttft.push_back(*r.client.ttft_ms);
    }
  }
}

// Reuse on against off, turn by turn, at the smallest level measured both ways.
void add_saving(ConversationReport& out) {
  std::map<std::string, int> smallest_both;
  for (const auto& row : out.rows) {
    if (!row.reuse) {
      continue;
    }
    for (const auto& other : out.rows) {
      if (!other.reuse && other.config == row.config && other.conversations == row.conversations) {
        auto [it, fresh] = smallest_both.emplace(row.config, row.conversations);
        if (!fresh) {
          it->second = std::min(it->second, row.conversations);
        }
      }
    }
  }
  for (const auto& row : out.rows) {
    const auto level = smallest_both.find(row.config);
    if (!row.reuse || level == smallest_both.end() || row.conversations != level->second ||
        !row.ttft_ms) {
      continue;
    }
    for (const auto& other : out.rows) {
      if (!other.reuse && other.config == row.config && other.conversations == row.conversations &&
          other.turn == row.turn && other.ttft_ms) {
        out.saving.push_back(
            {row.config, row.conversations, row.turn, *row.ttft_ms, *other.ttft_ms});
      }
    }
  }
}

// The answer in words, per configuration: up to which level every conversation kept its
// history, and what one slot holds.
void add_answers(const results::RunManifest& run, Tally& tl, ConversationReport& out) {
  std::map<std::string, ConversationReport::Answer> answers;
  for (const auto& l : out.levels) {
    auto& a = answers[l.config];
    a.config = l.config;
    if (l.turns > 0 && l.kept == l.turns && !a.first_lost) {
      a.kept_up_to = l.conversations;
    } else if (l.turns > 0 && l.kept < l.turns && !a.first_lost) {
      a.first_lost = l.conversations;
      a.reread = l.reread;
    }
  }
  for (auto& [config, a] : answers) {
    a.final_tokens = turn_median(tl.final_tokens[config]);
    for (const auto& b : run.blocks) {
      if (turn_config(b.num_ctx, b.cache_type, b.variant) != config) {
        continue;
      }
      a.slot_cells = b.num_ctx;
      const auto bytes = static_cast<double>(b.memory.kv_bytes_logged.value_or(0));
      const int cells = b.num_ctx * b.slots.value_or(out.slots);
      if (bytes > 0 && cells > 0) {
        a.kv_bytes_per_token = bytes / cells;
      }
      if (const auto* mib =
              b.prompt_cache ? std::get_if<long long>(&b.prompt_cache->cache_ram_mib) : nullptr) {
        a.cache_ram_mib = static_cast<int>(*mib);
      }
      break;
    }
    out.answers.push_back(a);
  }
}

}  // namespace

ConversationReport conversation_report(const workloads::Conversation& conv,
                                       const results::RunManifest& run,
                                       const std::vector<CallRecord>& calls) {
  ConversationReport out;
  out.present = true;
  out.turns = conv.turns;
  out.slots = conv.slots;
  out.concurrent = conv.concurrent;
  out.think_time_s = conv.think_time_s;
  Tally tl;
  for (const auto& r : calls) {
    tally_turn(r, out, tl);
  }
  for (auto& [key, a] : tl.acc) {
    const auto& [config, level, reuse, turn] = key;
    out.rows.push_back({config, level, reuse, turn, a.n, a.failed, turn_median(a.ttft),
                        turn_median(a.prompt), turn_median(a.reused), turn_median(a.history),
                        turn_median(a.decode), a.proved, a.predicted, a.lost});
  }
  add_saving(out);
  for (auto& [key, l] : tl.levels) {
    const auto& [config, level] = key;
    const AtOnce& o = tl.at_once[key];
    out.levels.push_back({config, level, l.turns, l.kept, l.history > 0 ? l.reused / l.history : 0,
                          turn_median(l.reread), turn_median(l.ttft), o.max_in_flight,
                          turn_median(o.wait)});
  }
  for (const auto& [key, turns] : tl.lost) {
    const auto& [block, conversation, level] = key;
    out.lost_where.push_back(fmt::format("block {}, conversation {} ({} in its set): turn{} {}",
                                         block, conversation, level, turns.size() == 1 ? "" : "s",
                                         turn_ranges(turns)));
  }
  add_answers(run, tl, out);
  return out;
}

}  // namespace kvbench::report
