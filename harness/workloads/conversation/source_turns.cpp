#include "harness/workloads/conversation/source_turns.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/http/transport.h"
#include "harness/prompt/edit.h"
#include "harness/prompt/prompt.h"

namespace kvbench::run {

namespace {

constexpr const char* kSystemFirstLine =
    "You are the conversation partner of a benchmark. Answer every message of the user.";

// The first user message becomes `line`, then the rest of the conversation's opening.
void open_with(std::vector<backend::ChatMessage>& messages, const std::string& line,
               const std::string& rest) {
  for (auto& m : messages) {
    if (m.role == "user") {
      m.content = line + "\n" + rest;
      return;
    }
  }
}

bool has_flag(const CallRecord& r, std::string_view flag) {
  return std::find(r.flags.begin(), r.flags.end(), flag) != r.flags.end();
}

}  // namespace

std::pair<int, std::string> held_reuse(const std::vector<int>& ids, const HeldTokens& held) {
  if (ids.empty() || held.prompt.empty()) {
    return {0, "ids"};
  }
  if (!held.answer_ids.empty()) {
    std::vector<int> cache = held.prompt;
    cache.insert(cache.end(), held.answer_ids.begin(), held.answer_ids.end() - 1);
    return {prompt::expected_reuse(ids, cache), "ids"};
  }
  const std::size_t shared = prompt::first_difference(ids, held.prompt);
  if (shared < held.prompt.size() || held.answer_count <= 1) {
    return {prompt::expected_reuse(ids, held.prompt), "ids"};
  }
  const auto through_answer = shared + static_cast<std::size_t>(held.answer_count - 1);
  return {static_cast<int>(std::min(through_answer, ids.size() - 1)), "count"};
}

void ConversationTurns::restore(const std::vector<CallRecord>& recorded) {
  for (const auto& r : recorded) {
    const TurnRecord* turn = turn_record(r);
    if (turn == nullptr || r.nonce.empty()) {
      continue;
    }
    const Key key{r.block, turn->conversation};
    if (turn->turn == 1) {
      recorded_nonces_[key] = r.nonce;  // the first line stays, whether its answer came or not
    }
    if (r.ok()) {  // a failed turn left the history as it was
      recorded_answers_[{key, turn->turn}] = turn->answer;
    }
  }
}

void ConversationTurns::reset_slots(const std::vector<int>& slot0) {
  slots_.clear();
  if (!slot0.empty()) {
    slots_[0] = Slot{-1, HeldTokens{slot0, {}, 0}};
  }
}

void ConversationTurns::slot_read(int slot, const std::vector<int>& ids) {
  slots_[slot] = Slot{-1, HeldTokens{ids, {}, 0}};
}

const std::string& ConversationTurns::system_text(backend::Backend& be) {
  if (!system_built_ && conv_.system_tokens > 0) {
    // The run id keeps another run's conversations (an attached server's cache) out of it.
    system_ = prompt::build_prompt(conv_.system_tokens,
                                   fmt::format("{} Session {}.", kSystemFirstLine, run_id_),
                                   s_.seed * std::uint64_t{7919} + 17,
                                   [&](std::string_view t) { return be.count_tokens(t); })
                  .text;
  }
  system_built_ = true;
  return system_;
}

// A user message of about user_tokens tokens; the same for the same conversation and turn.
std::string ConversationTurns::user_text(backend::Backend& be, const workloads::Turn& t,
                                         const std::string& first_line) {
  const std::uint64_t seed = s_.seed * std::uint64_t{1000003} +
                             static_cast<std::uint64_t>(t.conversation) * 1009 +
                             static_cast<std::uint64_t>(t.turn);
  return prompt::build_prompt(conv_.user_tokens, first_line, seed,
                              [&](std::string_view text) { return be.count_tokens(text); })
      .text;
}

void ConversationTurns::open_conversation(backend::Backend& be, const workloads::Turn& t,
                                          const std::string& nonce, const std::string& system,
                                          State& st) {
  st = State{};
  st.nonce = nonce;
  st.first_user = user_text(
      be, workloads::Turn{t.conversation, t.set, t.conversations, t.index, 1, t.reuse}, "Turn 1.");
  if (!system.empty()) {
    st.messages.push_back({"system", system});
  }
  st.messages.push_back({"user", nonce + "\n" + st.first_user});
}

void ConversationTurns::predict_history(const PreparedCall& p, const State& st,
                                        const workloads::Turn& t, TurnRecord& rt) {
  if (p.ids.empty()) {
    // No token ids: the history is known only as the server counted the previous prompt, a
    // least the turn reuses when its history was kept (the answer after it may be cached too).
    if (t.turn == 1 || !t.reuse) {
      rt.history_tokens = 0;
    } else if (st.held && st.held->prompt_count > 0) {
      rt.history_tokens = p.cache_rule.apply(st.held->prompt_count);
      rt.history_basis = "reported";
    }
  } else {
    if (t.turn == 1 || !t.reuse) {
      rt.history_tokens = 0;
    } else if (st.held) {
      const auto [n, basis] = held_reuse(p.ids, *st.held);
      rt.history_tokens = p.cache_rule.apply(n);
      rt.history_basis = basis;
      if (basis == "count") {
        rt.history_floor = p.cache_rule.apply(prompt::expected_reuse(p.ids, st.held->prompt));
      }
    }
  }
}

PreparedCall ConversationTurns::prepare(const CallRecords& records, backend::Backend& be,
                                        const plan::PlannedCall& call, const plan::Block& block) {
  PreparedCall p;
  p.call = call;
  p.record = records.base(call, block);
  CallRecord& r = p.record;
  const workloads::Turn& t = *workloads::turn_of(call);
  const auto& conv = conv_;
  const Key key{block.index, t.conversation};
  State& st = states_[key];
  const auto caps = be.capabilities();
  const int slot = t.index % conv.slots;
  TurnRecord rt = *turn_record(r);  // its place in the conversation, from the plan (base)
  if (caps.slot_pinning) {
    rt.slot = slot;
  }
  // Reuse on: one first line for the whole conversation; off: a fresh one every turn.
  const std::string own_nonce = prompt::nonce_line(run_id_, call.seq);
  std::vector<backend::ChatMessage> messages;
  try {
    const std::string& system = system_text(be);
    const auto opening = [&](const std::string& nonce) {
      open_conversation(be, t, nonce, system, st);
    };
    if (t.turn == 1) {
      opening(own_nonce);
    } else if (st.nonce.empty()) {
      // A resumed run: the conversation's history comes back from its recorded answers.
      const auto n = recorded_nonces_.find(key);
      opening(n != recorded_nonces_.end() ? n->second : own_nonce);
      for (int k = 1; k < t.turn; ++k) {
        const auto a = recorded_answers_.find({key, k});
        if (a == recorded_answers_.end()) {
          continue;  // that turn failed: it left the history as it was
        }
        if (k > 1) {
          workloads::Turn earlier = t;
          earlier.turn = k;
          st.messages.push_back({"user", user_text(be, earlier, fmt::format("Turn {}.", k))});
        }
        st.messages.push_back({"assistant", a->second});
      }
    }
    messages = st.messages;
    if (t.turn > 1) {
      messages.push_back({"user", user_text(be, t, fmt::format("Turn {}.", t.turn))});
    }
    r.nonce = t.reuse ? st.nonce : own_nonce;
    if (!t.reuse) {
      open_with(messages, own_nonce, st.first_user);  // the fresh line
    }
    auto rendered = be.render_chat(messages);
    p.ids = std::move(rendered.ids);
    p.spec.prompt = std::move(rendered.text);
  } catch (const Error& e) {
    const bool cut = http::interrupted();
    r.outcome = cut ? Outcome::aborted : Outcome::tokenize_error;
    r.error = cut ? std::string(http::kInterruptedError) : e.what();
    r.part = RecordPart::of(std::move(rt));
    return p;
  }
  p.ready = true;
  if (!p.ids.empty()) {
    r.prompt_tokens_counted = static_cast<int>(p.ids.size());
  }
  p.fresh = t.turn == 1 || !t.reuse;
  p.cache_rule = s_.server.cache_rule;
  p.spec.messages = std::move(messages);
  p.spec.max_tokens = conv.answer_tokens;
  p.spec.seed = s_.seed;
  p.spec.timeout = std::chrono::milliseconds(static_cast<long long>(s_.timeout_s * 1000));
  p.spec.slot = slot;
  p.spec.cache_prompt = t.reuse;
  predict_history(p, st, t, rt);
  r.part = RecordPart::of(std::move(rt));
  return p;  // its reuse is predicted by expect() just before it is sent
}

void ConversationTurns::expect(PreparedCall& p, const backend::Capabilities& caps) const {
  const workloads::Turn& t = *workloads::turn_of(p.call);
  CallRecord& r = p.record;
  if (p.ids.empty()) {
    return;
  }
  r.expected_cache_n.reset();
  if (!t.reuse && caps.reuse_switch) {
    r.expected_cache_n = 0;  // cache_prompt false: the whole prompt is read
  } else if (caps.slot_pinning) {
    const auto it = slots_.find(t.index % conv_.slots);
    if (it == slots_.end()) {
      r.expected_cache_n = 0;  // the slot holds nothing yet
    } else if (it->second) {
      r.expected_cache_n = p.cache_rule.apply(held_reuse(p.ids, it->second->held).first);
    }
  } else if (const TurnRecord* turn = turn_record(std::as_const(r));
             turn != nullptr && t.turn > 1 && t.reuse) {
    r.expected_cache_n = turn->history_tokens;
  }
}

double ConversationTurns::wait_s(const plan::PlannedCall& call, const plan::Block& block,
                                 Nanos now) const {
  if (!workloads::turn_of(call) || conv_.think_time_s <= 0) {
    return 0;
  }
  const auto it = states_.find({block.index, workloads::turn_of(call)->conversation});
  if (it == states_.end() || !it->second.answered_known || workloads::turn_of(call)->turn == 1) {
    return 0;
  }
  const double since = std::chrono::duration<double>(now - it->second.answered).count();
  return std::max(0.0, conv_.think_time_s - since);
}

void ConversationTurns::answered(PreparedCall& p, const backend::CallResult& res) {
  const workloads::Turn& t = *workloads::turn_of(p.call);
  State& st = states_[{p.record.block, t.conversation}];
  if (TurnRecord* turn = turn_record(p.record)) {
    turn->answer = res.text;
  }
  st.answered = res.trace.done;
  st.answered_known = true;
  const int slot = t.index % conv_.slots;
  if (res.outcome != Outcome::ok) {
    // A failed turn leaves the history as it was (the next turn goes on from the last answer);
    // what it left in the cache is not known.
    st.held.reset();
    slots_[slot] = std::nullopt;
    return;
  }
  st.messages = p.spec.messages;
  if (!t.reuse) {
    // The history keeps the conversation's own first line; the next turn replaces it again.
    open_with(st.messages, st.nonce, st.first_user);
  }
  st.messages.push_back({"assistant", res.text});
  int generated = 0;
  for (const int n : res.trace.token_counts) {
    generated += n;
  }
  HeldTokens held{p.ids, res.ids, res.server.predicted_n.value_or(generated),
                  res.server.prompt_total.value_or(0)};
  st.held = held;
  slots_[slot] = Slot{t.conversation, std::move(held)};
}

void ConversationTurns::flag(CallRecord& r) {
  const TurnRecord* turn = turn_record(std::as_const(r));
  if (turn == nullptr || !r.ok() || !r.server.cache_n) {
    return;
  }
  const int reused = *r.server.cache_n;
  const auto& history = turn->history_tokens;
  const int floor = turn->history_floor.value_or(history.value_or(0));
  if (turn->reuse && turn->turn > 1 && history && reused < floor) {
    r.flags.emplace_back("history_lost");
  }
  if (r.expected_cache_n && reused > *r.expected_cache_n) {
    const bool within_history = turn->reuse && history && reused <= *history;
    if (within_history && reused >= floor && !has_flag(r, "history_restored")) {
      r.flags.emplace_back("history_restored");  // all of it came back from outside the slot
    } else if (!within_history) {
      r.flags.emplace_back("unexpected_cache_reuse");
    }
  }
}

}  // namespace kvbench::run
