#include "harness/report/conversation.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/stats/descriptive.h"

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

std::string turn_cell(const std::optional<double>& v, const char* spec = "{:.0f}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

json turn_json(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

ConversationReport conversation_report(const results::RunManifest& run,
                                       const std::vector<CallRecord>& calls) {
  ConversationReport out;
  const json conv = run.scenario.value("conversation", json::object());
  if (conv.empty()) {
    return out;
  }
  out.present = true;
  out.turns = conv.value("turns", 0);
  out.slots = conv.value("slots", 1);
  out.concurrent = conv.value("concurrent", false);
  out.think_time_s = conv.value("think_time_s", 0.0);
  using Key = std::tuple<std::string, int, bool, int>;  // config, level, reuse, turn
  struct Acc {
    std::vector<double> ttft, prompt, reused, history, decode;
    int n = 0, failed = 0, proved = 0, predicted = 0, lost = 0;
  };
  std::map<Key, Acc> acc;
  using LevelKey = std::tuple<std::string, int>;
  struct LevelAcc {
    int turns = 0, kept = 0;
    double reused = 0, history = 0;
    std::vector<double> reread, ttft;
  };
  std::map<LevelKey, LevelAcc> levels;
  struct AtOnce {
    int max_in_flight = 0;
    std::vector<double> wait;
  };
  std::map<LevelKey, AtOnce> at_once;
  std::map<std::tuple<int, int, int>, std::vector<int>> lost;  // block, conversation, level
  std::map<std::string, std::vector<double>> final_tokens;
  for (const auto& r : calls) {
    if (!r.turn || r.kind != CallKind::timed || r.outcome == Outcome::aborted) {
      continue;
    }
    const auto& t = *r.turn;
    Acc& a = acc[{turn_config(r), t.conversations, t.reuse, t.turn}];
    if (!r.ok()) {
      ++a.failed;
      continue;
    }
    ++a.n;
    if (r.client.ttft_ms) {
      a.ttft.push_back(*r.client.ttft_ms);
    }
    if (r.in_flight) {
      AtOnce& o = at_once[{turn_config(r), t.conversations}];
      o.max_in_flight = std::max(o.max_in_flight, *r.in_flight);
      if (r.queue_ms) {
        o.wait.push_back(*r.queue_ms);
      }
    }
    // The prompt as counted before sending, or as the server counted it (no token ids).
    if (const auto tokens =
            r.prompt_tokens_counted ? r.prompt_tokens_counted : r.server.prompt_total) {
      a.prompt.push_back(*tokens);
      if (t.turn == out.turns && t.reuse) {
        final_tokens[turn_config(r)].push_back(*tokens);
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
      lost[{r.block, t.conversation, t.conversations}].push_back(t.turn);
    }
    out.restored += turn_flagged(r, "history_restored") ? 1 : 0;
    out.unexpected += turn_flagged(r, "unexpected_cache_reuse") ? 1 : 0;
    if (t.reuse && t.turn > 1 && t.history_tokens && r.server.cache_n) {
      LevelAcc& l = levels[{turn_config(r), t.conversations}];
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
  for (auto& [key, a] : acc) {
    const auto& [config, level, reuse, turn] = key;
    out.rows.push_back({config, level, reuse, turn, a.n, a.failed, turn_median(a.ttft),
                        turn_median(a.prompt), turn_median(a.reused), turn_median(a.history),
                        turn_median(a.decode), a.proved, a.predicted, a.lost});
  }
  // Reuse on against off, turn by turn, at the smallest level measured both ways.
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
  for (auto& [key, l] : levels) {
    const auto& [config, level] = key;
    const AtOnce& o = at_once[key];
    out.levels.push_back({config, level, l.turns, l.kept, l.history > 0 ? l.reused / l.history : 0,
                          turn_median(l.reread), turn_median(l.ttft), o.max_in_flight,
                          turn_median(o.wait)});
  }
  for (const auto& [key, turns] : lost) {
    const auto& [block, conversation, level] = key;
    out.lost_where.push_back(fmt::format("block {}, conversation {} ({} in its set): turn{} {}",
                                         block, conversation, level, turns.size() == 1 ? "" : "s",
                                         turn_ranges(turns)));
  }
  // The answer in words, per configuration.
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
    a.final_tokens = turn_median(final_tokens[config]);
    for (const auto& b : run.blocks) {
      if (turn_config(b.num_ctx, b.cache_type, b.variant) != config) {
        continue;
      }
      a.slot_cells = b.num_ctx;
      const double bytes = b.get<double>("kv_bytes_logged", 0.0);
      const int cells = b.num_ctx * b.slots.value_or(out.slots);
      if (bytes > 0 && cells > 0) {
        a.kv_bytes_per_token = bytes / cells;
      }
      const json pc = b.object("prompt_cache");
      if (pc.contains("cache_ram_mib") && pc["cache_ram_mib"].is_number_integer()) {
        a.cache_ram_mib = pc["cache_ram_mib"].get<int>();
      }
      break;
    }
    out.answers.push_back(a);
  }
  return out;
}

void write_conversation_markdown(std::ostream& out, const ConversationReport& r) {
  if (!r.present) {
    return;
  }
  out << "\n## Conversations\n\n";
  out << fmt::format(
      "Every turn resends the whole conversation: a system prompt all conversations share, then "
      "the conversation's own unique first line, every message and every answer the server gave, "
      "and a new user message. Only the system prompt may be shared between conversations; a "
      "conversation's history is its own. {}, conversation k of a set pinned to slot k mod {} "
      "where the server pins slots{}. "
      "\"history\" is the reuse predicted had the server kept the conversation's history (its "
      "prompt up to the end of the previous answer, from token ids); \"proof\" counts the turns "
      "that reused exactly what their slot held.\n",
      r.concurrent ? "The conversations of a set are in flight at once, each its own stream"
                   : "Conversations take their turns round-robin",
      r.slots,
      r.concurrent
          ? fmt::format(": a turn is sent once its previous answer came{} and its slot is free",
                        r.think_time_s > 0 ? fmt::format(" and {:g} s passed", r.think_time_s) : "")
          : "");
  if (r.predicted > 0) {
    out << fmt::format(
        "\nProof: {} of {} turns reused exactly the tokens predicted from what their slot "
        "held; {} lost their history (reused less than it), {} got it back from outside their "
        "slot (the host prompt cache), {} reused more than both predictions.\n",
        r.proved, r.predicted, r.lost, r.restored, r.unexpected);
  }
  if (r.unpredicted > 0) {
    out << fmt::format(
        "\n{} turns reported their reuse without an exact prediction (the server gives no token "
        "ids, or a first turn on a server that does not pin slots).\n",
        r.unpredicted);
  }
  if (!r.saving.empty()) {
    out << "\n### What reuse saves, turn by turn\n\nMedian TTFT with the history reused and "
           "with reuse defeated, in the smallest set measured both ways.\n\n";
    out << "| config | conversations | turn | TTFT reuse on ms | TTFT reuse off ms | saved ms | "
           "off / on |\n|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& s : r.saving) {
      out << fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.2f} |\n", s.config,
                         s.conversations, s.turn, s.on_ms, s.off_ms, s.off_ms - s.on_ms,
                         s.on_ms > 0 ? s.off_ms / s.on_ms : 0.0);
    }
  }
  out << "\n### Turn by turn\n\nMedians over the turns of each set level, reuse mode and turn; "
         "decode rate against the context depth the turn reached.\n\n";
  out << "| config | conversations | reuse | turn | n | failed | prompt tokens | reused | history "
         "| proof | lost history | TTFT ms | decode tok/s |\n"
         "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& row : r.rows) {
    out << fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row.config,
        row.conversations, row.reuse ? "on" : "off", row.turn, row.n, row.failed,
        turn_cell(row.prompt_tokens), turn_cell(row.reused), turn_cell(row.history),
        row.predicted > 0 ? fmt::format("{}/{}", row.proved, row.predicted) : "-", row.lost,
        turn_cell(row.ttft_ms, "{:.1f}"), turn_cell(row.decode_tps, "{:.1f}"));
  }
  if (!r.levels.empty()) {
    out << "\n### How many conversations stay cached\n\nTurns after the first, reuse on: the "
           "share of the predicted history the server reused.\n\n";
    out << "| config | conversations | turns | kept their history | reuse rate | history "
           "re-read per lost turn | TTFT ms |"
        << (r.concurrent ? " most in flight | wait ms |" : "")
        << "\n|---|---:|---:|---:|---:|---:|---:|" << (r.concurrent ? "---:|---:|" : "") << "\n";
    for (const auto& l : r.levels) {
      out << fmt::format("| {} | {} | {} | {} | {:.1f} % | {} | {} |", l.config, l.conversations,
                         l.turns, l.kept, 100 * l.reuse_rate, turn_cell(l.reread),
                         turn_cell(l.history_ttft_ms, "{:.1f}"));
      if (r.concurrent) {
        out << fmt::format(" {} | {} |", l.max_in_flight, turn_cell(l.wait_ms, "{:.1f}"));
      }
      out << "\n";
    }
    if (r.concurrent) {
      out << "\n\"wait ms\": median time from when a turn was due (its previous answer"
          << (r.think_time_s > 0 ? " and the think time" : "")
          << ") to its send, its preparing and any wait for its slot included.\n";
    }
  }
  for (const auto& a : r.answers) {
    std::string words;
    if (a.kept_up_to && !a.first_lost) {
      words = fmt::format("every set measured, up to {} conversation{}, kept its history cached",
                          *a.kept_up_to, *a.kept_up_to == 1 ? "" : "s");
    } else if (a.first_lost) {
      words = a.kept_up_to
                  ? fmt::format("up to {} conversation{} of this length {} cached here",
                                *a.kept_up_to, *a.kept_up_to == 1 ? "" : "s",
                                *a.kept_up_to == 1 ? "keeps its history" : "keep their history")
                  : "not even the smallest set kept its history cached";
      words += fmt::format("; with {} each lost turn re-reads about {} tokens of its history",
                           *a.first_lost, turn_cell(a.reread));
    } else {
      continue;
    }
    out << fmt::format("\n**{}**: {}.", a.config, words);
    if (a.final_tokens && a.kv_bytes_per_token > 0) {
      const double per_conv_mib = *a.final_tokens * a.kv_bytes_per_token / (1024.0 * 1024.0);
      out << fmt::format(
          " KV arithmetic: a conversation ends at about {:.0f} tokens, {:.1f} MiB of KV at "
          "{:.0f} bytes per token; the server's {} slot{} hold {} tokens each",
          *a.final_tokens, per_conv_mib, a.kv_bytes_per_token, r.slots, r.slots == 1 ? "" : "s",
          a.slot_cells);
      if (a.cache_ram_mib) {
        out << fmt::format(", and its host prompt cache (--cache-ram) {} MiB", *a.cache_ram_mib);
      }
      out << ".";
    }
    out << "\n";
  }
  if (!r.lost_where.empty()) {
    out << "\nTurns that lost their history:\n\n";
    for (const auto& w : r.lost_where) {
      out << "- " << w << "\n";
    }
  }
}

json to_json(const ConversationReport& r) {
  if (!r.present) {
    return nullptr;
  }
  json rows = json::array();
  for (const auto& row : r.rows) {
    rows.push_back({{"config", row.config},
                    {"conversations", row.conversations},
                    {"reuse", row.reuse ? "on" : "off"},
                    {"turn", row.turn},
                    {"n", row.n},
                    {"failed", row.failed},
                    {"ttft_ms", turn_json(row.ttft_ms)},
                    {"prompt_tokens", turn_json(row.prompt_tokens)},
                    {"reused", turn_json(row.reused)},
                    {"history", turn_json(row.history)},
                    {"decode_tps", turn_json(row.decode_tps)},
                    {"proved", row.proved},
                    {"predicted", row.predicted},
                    {"lost", row.lost}});
  }
  json levels = json::array();
  for (const auto& l : r.levels) {
    levels.push_back({{"config", l.config},
                      {"conversations", l.conversations},
                      {"turns", l.turns},
                      {"kept", l.kept},
                      {"reuse_rate", l.reuse_rate},
                      {"reread_tokens", turn_json(l.reread)},
                      {"ttft_ms", turn_json(l.history_ttft_ms)}});
    if (r.concurrent) {
      levels.back()["max_in_flight"] = l.max_in_flight;
      levels.back()["wait_ms"] = turn_json(l.wait_ms);
    }
  }
  json saving = json::array();
  for (const auto& s : r.saving) {
    saving.push_back({{"config", s.config},
                      {"conversations", s.conversations},
                      {"turn", s.turn},
                      {"ttft_on_ms", s.on_ms},
                      {"ttft_off_ms", s.off_ms}});
  }
  json answers = json::array();
  for (const auto& a : r.answers) {
    answers.push_back(
        {{"config", a.config},
         {"kept_up_to", a.kept_up_to ? json(*a.kept_up_to) : json(nullptr)},
         {"first_lost", a.first_lost ? json(*a.first_lost) : json(nullptr)},
         {"reread_tokens", turn_json(a.reread)},
         {"final_tokens", turn_json(a.final_tokens)},
         {"kv_bytes_per_token", a.kv_bytes_per_token},
         {"slot_cells", a.slot_cells},
         {"cache_ram_mib", a.cache_ram_mib ? json(*a.cache_ram_mib) : json(nullptr)}});
  }
  return {{"turns", r.turns},
          {"slots", r.slots},
          {"concurrent", r.concurrent},
          {"proved", r.proved},
          {"predicted", r.predicted},
          {"unpredicted", r.unpredicted},
          {"lost", r.lost},
          {"restored", r.restored},
          {"unexpected", r.unexpected},
          {"lost_where", r.lost_where},
          {"rows", rows},
          {"levels", levels},
          {"saving", saving},
          {"answers", answers}};
}

}  // namespace kvbench::report
