// The conversation workload in the scenario layer: its settings, its rules against the rest of
// the scenario, and what run.json records of it. What it does not compose with is declared in
// the scenario's table of parts (workloads/composition.cpp).

#include <algorithm>

#include "harness/scenario/kinds.h"
#include "harness/scenario/parse_detail.h"
#include "harness/workloads/conversation/spec.h"

namespace kvbench::workloads {

using nlohmann::json;
using scenario::detail::Checker;

namespace {

// Template tokens a chat template adds per message (role markers and the like), at most: what
// the context check allows for beyond the messages' own tokens.
constexpr int kTemplateTokensPerTurn = 16;

std::vector<int> levels(Checker& c, const json& v, const std::string& path) {
  std::vector<int> out;
  if (v.is_number_integer()) {
    if (auto n = c.integer(v, path, 1, 64)) {
      out.push_back(*n);
    }
    return out;
  }
  if (!v.is_array() || v.empty()) {
    c.problem(path, fmt::format("expected a number of conversations (1 to 64) or a list of them, "
                                "got {}",
                                Checker::describe(v)));
    return out;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto n = c.integer(v[i], fmt::format("{}[{}]", path, i), 1, 64)) {
      if (std::find(out.begin(), out.end(), *n) != out.end()) {
        c.problem(fmt::format("{}[{}]", path, i), fmt::format("{} is listed twice", *n));
      } else {
        out.push_back(*n);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> reuse_modes(Checker& c, const json& v, const std::string& path) {
  std::vector<std::string> out;
  const json list = v.is_string() ? json::array({v}) : v;
  if (!list.is_array() || list.empty()) {
    c.problem(path, fmt::format("expected \"on\", \"off\" or [\"on\", \"off\"], got {}",
                                Checker::describe(v)));
    return out;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = v.is_string() ? path : fmt::format("{}[{}]", path, i);
    const auto s = c.string(list[i], p, false);
    if (!s) {
      continue;
    }
    if (*s != "on" && *s != "off") {
      c.problem(p, fmt::format("'{}': expected \"on\" (the history may be reused) or \"off\" "
                               "(reuse defeated)",
                               *s));
    } else if (std::find(out.begin(), out.end(), *s) != out.end()) {
      c.problem(p, fmt::format("'{}' is listed twice", *s));
    } else {
      out.push_back(*s);
    }
  }
  return out;
}

}  // namespace

void parse(Checker& c, const json& v, const std::string& path, Conversation& conv) {
  if (!v.is_object()) {
    c.problem(path, fmt::format("expected an object like {{\"turns\": 8, \"system_tokens\": "
                                "1500, \"user_tokens\": 120, \"answer_tokens\": 64}}, got {}",
                                Checker::describe(v)));
    return;
  }
  c.keys(v, path,
         {"turns", "system_tokens", "user_tokens", "answer_tokens", "conversations", "reuse",
          "slots", "think_time_s", "concurrent"});
  const auto at = [&](const char* key) { return Checker::join(path, key); };
  if (!v.contains("turns")) {
    c.problem(at("turns"), "missing: how many turns each conversation takes, 1 to 256");
  } else {
    conv.turns = c.integer(v["turns"], at("turns"), 1, 256).value_or(0);
  }
  if (v.contains("system_tokens")) {
    conv.system_tokens =
        c.integer(v["system_tokens"], at("system_tokens"), 0, 131072).value_or(conv.system_tokens);
  }
  if (v.contains("user_tokens")) {
    conv.user_tokens =
        c.integer(v["user_tokens"], at("user_tokens"), 8, 131072).value_or(conv.user_tokens);
  }
  if (v.contains("answer_tokens")) {
    conv.answer_tokens =
        c.integer(v["answer_tokens"], at("answer_tokens"), 2, 4096).value_or(conv.answer_tokens);
  }
  if (v.contains("conversations")) {
    conv.conversations = levels(c, v["conversations"], at("conversations"));
  }
  if (v.contains("reuse")) {
    conv.reuse = reuse_modes(c, v["reuse"], at("reuse"));
  }
  if (v.contains("slots")) {
    conv.slots = c.integer(v["slots"], at("slots"), 1, 64).value_or(conv.slots);
  }
  if (v.contains("think_time_s")) {
    const json& t = v["think_time_s"];
    if (!t.is_number() || t.get<double>() < 0 || t.get<double>() > 3600) {
      c.problem(at("think_time_s"), fmt::format("expected a number of seconds in [0, 3600], got {}",
                                                Checker::describe(t)));
    } else {
      conv.think_time_s = t.get<double>();
    }
  }
  if (v.contains("concurrent")) {
    if (!v["concurrent"].is_boolean()) {
      c.problem(at("concurrent"),
                fmt::format("expected true (a set's conversations in flight at once) or false "
                            "(one turn at a time, round-robin), got {}",
                            Checker::describe(v["concurrent"])));
    } else {
      conv.concurrent = v["concurrent"].get<bool>();
    }
  }
}

void check(Checker& c, const scenario::Scenario& s, const Conversation& conv) {
  const std::string path = c.workload_path();
  if (scenario::traits(s.server.kind).has_endpoint && s.server.endpoint != "chat") {
    c.problem("server.endpoint",
              "a conversation is sent as chat messages: use the \"chat\" endpoint");
  }
  if (conv.slots > 1 && scenario::traits(s.server.kind).queues_streams) {
    c.problem(path + ".slots",
              "Ollama picks its own slots (OLLAMA_NUM_PARALLEL): remove " + path + ".slots");
  }
  const int need = conv.final_tokens() + (2 * conv.turns + 1) * kTemplateTokensPerTurn;
  for (std::size_t i = 0; i < s.factors.num_ctx.size(); ++i) {
    if (need > s.factors.num_ctx[i]) {
      c.problem(path + ".turns",
                fmt::format("{} turns of {} user and {} answer tokens after a {}-token system "
                            "prompt need about {} tokens, more than num_ctx {}",
                            conv.turns, conv.user_tokens, conv.answer_tokens, conv.system_tokens,
                            need, s.factors.num_ctx[i]));
      break;
    }
  }
}

// Recorded at the top level, where earlier versions wrote it, so that a scenario's hash (and the
// history's comparisons) stay what they were; its turns and answer_tokens take the place of
// repeats and max_tokens.
void add_to_json(const Conversation& conv, json& resolved) {
  resolved.erase("repeats");
  resolved.erase("max_tokens");
  resolved["conversation"] = {{"turns", conv.turns},
                              {"system_tokens", conv.system_tokens},
                              {"user_tokens", conv.user_tokens},
                              {"answer_tokens", conv.answer_tokens},
                              {"conversations", conv.conversations},
                              {"reuse", conv.reuse},
                              {"slots", conv.slots},
                              {"think_time_s", conv.think_time_s},
                              {"concurrent", conv.concurrent}};
}

}  // namespace kvbench::workloads
