#include "harness/workloads/conversation/report.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/stats/descriptive.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

std::string turn_cell(const std::optional<double>& v, const char* spec = "{:.0f}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

json turn_json(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

void write_saving_table(std::ostream& out, const ConversationReport& r) {
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
}

void write_turn_table(std::ostream& out, const ConversationReport& r) {
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
}

void write_level_table(std::ostream& out, const ConversationReport& r) {
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
}

// The answer in words per configuration, with the KV arithmetic of one conversation.
void write_conversation_answers(std::ostream& out, const ConversationReport& r) {
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
}

}  // namespace

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
  write_saving_table(out, r);
  write_turn_table(out, r);
  write_level_table(out, r);
  write_conversation_answers(out, r);
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
