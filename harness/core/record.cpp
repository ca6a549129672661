#include "harness/core/record.h"

#include <array>
#include <ostream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/optional_json.h"

namespace kvbench {

namespace {

double ms_between(Nanos from, Nanos to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

ClientTiming derive_timing(const CallTrace& trace) {
  ClientTiming t;
  if (trace.first_byte.count() != 0) {
    t.first_byte_ms = ms_between(trace.sent, trace.first_byte);
  }
  if (trace.request_out.count() != 0) {
    t.request_out_ms = ms_between(trace.sent, trace.request_out);
  }
  if (trace.done.count() != 0) {
    t.e2e_ms = ms_between(trace.sent, trace.done);
  }
  if (trace.first_event.count() != 0) {
    t.first_event_ms = ms_between(trace.sent, trace.first_event);
  }
  if (trace.first_reasoning.count() != 0) {
    t.first_reasoning_ms = ms_between(trace.sent, trace.first_reasoning);
  }
  t.reasoning_tokens = trace.reasoning_tokens;
  for (std::size_t i = 0; i < trace.token_arrivals.size(); ++i) {
    t.token_ms.push_back(ms_between(trace.sent, trace.token_arrivals[i]));
    t.tokens += i < trace.token_counts.size() ? trace.token_counts[i] : 1;
  }
  if (trace.token_arrivals.empty()) {
    return t;
  }
  t.ttft_ms = t.token_ms.front();
  const int first_count = trace.token_counts.empty() ? 1 : trace.token_counts.front();
  const double span_ms = t.token_ms.back() - t.token_ms.front();
  if (trace.token_arrivals.size() >= 2 && span_ms > 0) {
    t.decode_tps = (t.tokens - first_count) / (span_ms / 1000.0);
  }
  return t;
}

namespace {

template <typename Enum, std::size_t N>
struct Names {
  std::array<std::pair<Enum, std::string_view>, N> names;
  const char* what;

  std::string_view of(Enum e) const {
    for (const auto& [v, name] : names) {
      if (v == e) {
        return name;
      }
    }
    return "?";
  }
  Enum from(std::string_view name) const {
    std::vector<std::string> accepted;
    for (const auto& [v, n] : names) {
      if (n == name) {
        return v;
      }
      accepted.push_back(fmt::format("'{}'", n));
    }
    throw InputError(
        fmt::format("{} '{}': expected one of {}", what, name, fmt::join(accepted, ", ")));
  }
};

constexpr Names<CallKind, 3> kKinds{
    {{{CallKind::warmup, "warmup"}, {CallKind::timed, "timed"}, {CallKind::probe, "probe"}}},
    "call kind"};
constexpr Names<PairRole, 3> kRoles{
    {{{PairRole::none, ""}, {PairRole::cold, "cold"}, {PairRole::edited, "edited"}}}, "pair role"};
constexpr Names<Outcome, 10> kOutcomes{{{{Outcome::ok, "ok"},
                                         {Outcome::connect_error, "connect_error"},
                                         {Outcome::timeout, "timeout"},
                                         {Outcome::http_error, "http_error"},
                                         {Outcome::stream_error, "stream_error"},
                                         {Outcome::aborted, "aborted"},
                                         {Outcome::server_error, "server_error"},
                                         {Outcome::tokenize_error, "tokenize_error"},
                                         {Outcome::server_start_error, "server_start_error"},
                                         {Outcome::server_died, "server_died"}}},
                                       "outcome"};

}  // namespace

std::string_view to_string(CallKind kind) {
  return kKinds.of(kind);
}
std::string_view to_string(PairRole role) {
  return kRoles.of(role);
}
std::string_view to_string(Outcome outcome) {
  return kOutcomes.of(outcome);
}
CallKind call_kind_from(std::string_view name) {
  return kKinds.from(name);
}
PairRole pair_role_from(std::string_view name) {
  return kRoles.from(name);
}
Outcome outcome_from(std::string_view name) {
  return kOutcomes.from(name);
}
std::ostream& operator<<(std::ostream& out, CallKind kind) {
  return out << to_string(kind);
}
std::ostream& operator<<(std::ostream& out, PairRole role) {
  return out << to_string(role);
}
std::ostream& operator<<(std::ostream& out, Outcome outcome) {
  return out << to_string(outcome);
}
void to_json(nlohmann::json& j, CallKind kind) {
  j = to_string(kind);
}
void to_json(nlohmann::json& j, PairRole role) {
  j = to_string(role);
}
void to_json(nlohmann::json& j, Outcome outcome) {
  j = to_string(outcome);
}
void from_json(const nlohmann::json& j, CallKind& kind) {
  kind = call_kind_from(j.get<std::string>());
}
void from_json(const nlohmann::json& j, PairRole& role) {
  role = pair_role_from(j.get<std::string>());
}
void from_json(const nlohmann::json& j, Outcome& outcome) {
  outcome = outcome_from(j.get<std::string>());
}

namespace {

nlohmann::json replay_json(const CallRecord::Replay& t) {
  nlohmann::json replay = {{"index", t.index},
                           {"due_ms", t.due_ms},
                           {"input_tokens", t.input_tokens},
                           {"output_tokens", t.output_tokens},
                           {"blocks", t.blocks},
                           {"block_tokens", t.block_tokens},
                           {"predicted_infinite_tokens", t.infinite_tokens},
                           {"predicted_infinite_blocks", t.infinite_blocks},
                           {"predicted_from", t.predicted_from}};
  put_optional(replay, "sent_ms", t.sent_ms);
  put_optional(replay, "predicted_tokens", t.predicted_tokens);
  put_optional(replay, "predicted_slot", t.predicted_slot);
  put_optional(replay, "working_set_blocks", t.working_set_blocks);
  if (t.lead_tokens > 0) {
    replay["lead_tokens"] = t.lead_tokens;
  }
  if (t.materialized) {
    replay["materialized"] = *t.materialized;
  }
  replay["loss"] = t.loss.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.loss);
  replay["mismatch"] = t.mismatch.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.mismatch);
  return replay;
}

}  // namespace

nlohmann::json to_json(const CallRecord& r) {
  nlohmann::json client = {{"tokens", r.client.tokens}, {"token_ms", r.client.token_ms}};
  put_optional(client, "ttft_ms", r.client.ttft_ms);
  put_optional(client, "first_byte_ms", r.client.first_byte_ms);
  put_optional(client, "request_out_ms", r.client.request_out_ms);
  put_optional(client, "e2e_ms", r.client.e2e_ms);
  put_optional(client, "decode_tps", r.client.decode_tps);
  put_optional(client, "first_event_ms", r.client.first_event_ms);
  put_optional(client, "first_reasoning_ms", r.client.first_reasoning_ms);
  if (r.client.reasoning_tokens > 0) {
    client["reasoning_tokens"] = r.client.reasoning_tokens;
  }
  nlohmann::json server = {{"raw", r.server.raw}};
  put_optional(server, "prompt_n", r.server.prompt_n);
  put_optional(server, "prompt_total", r.server.prompt_total);
  put_optional(server, "cache_n", r.server.cache_n);
  put_optional(server, "prompt_ms", r.server.prompt_ms);
  put_optional(server, "predicted_n", r.server.predicted_n);
  put_optional(server, "predicted_ms", r.server.predicted_ms);
  put_optional(server, "decode_tps", r.server.decode_tps);
  nlohmann::json j = {{"version", r.version},
                      {"run_id", r.run_id},
                      {"seq", r.seq},
                      {"block", r.block},
                      {"round", r.round},
                      {"kind", r.kind},
                      {"prompt_tokens", r.prompt_tokens},
                      {"num_ctx", r.num_ctx},
                      {"cache_type", r.cache_type},
                      {"nonce", r.nonce},
                      {"t_start_s", r.t_start_s},
                      {"wall_start", r.wall_start},
                      {"outcome", r.outcome},
                      {"error", r.error},
                      {"client", client},
                      {"server", server},
                      {"flags", r.flags}};
  put_optional(j, "prompt_tokens_counted", r.prompt_tokens_counted);
  put_optional(j, "http_status", r.http_status);
  put_optional(j, "expected_cache_n", r.expected_cache_n);
  if (!r.variant.empty()) {
    j["variant"] = r.variant;
  }
  put_optional(j, "slots", r.slots);
  put_optional(j, "stream", r.stream);
  put_optional(j, "in_flight", r.in_flight);
  put_optional(j, "queue_ms", r.queue_ms);
  put_optional(j, "cpu_mhz", r.cpu_mhz);
  if (r.pair_id) {
    nlohmann::json pair = {{"id", *r.pair_id},
                           {"role", r.pair_role},
                           {"edit_position", r.edit_position},
                           {"edit", r.edit}};
    put_optional(pair, "first_diff", r.edit_first_diff);
    put_optional(pair, "text_fraction", r.edit_text_fraction);
    j["pair"] = pair;
  }
  if (r.turn) {
    const auto& t = *r.turn;
    nlohmann::json turn = {{"conversation", t.conversation},   {"set", t.set},
                           {"conversations", t.conversations}, {"turn", t.turn},
                           {"reuse", t.reuse ? "on" : "off"},  {"answer", t.answer}};
    put_optional(turn, "slot", t.slot);
    put_optional(turn, "history_tokens", t.history_tokens);
    put_optional(turn, "history_floor", t.history_floor);
    put_optional(turn, "wait_ms", t.wait_ms);
    if (!t.history_basis.empty()) {
      turn["history_basis"] = t.history_basis;
    }
    j["conversation"] = turn;
  }
  if (r.replay) {
    j["trace"] = replay_json(*r.replay);
  }
  return j;
}

namespace {

// A conversation turn's part of a record; a version 1 record's queue_ms was its wait.
CallRecord::Turn turn_from_json(const nlohmann::json& t, CallRecord& r) {
  CallRecord::Turn turn;
  turn.conversation = t.value("conversation", 0);
  turn.set = t.value("set", 0);
  turn.conversations = t.value("conversations", 1);
  turn.turn = t.value("turn", 1);
  turn.reuse = t.value("reuse", "on") != "off";
  turn.slot = optional_at<int>(t, "slot");
  turn.history_tokens = optional_at<int>(t, "history_tokens");
  turn.history_floor = optional_at<int>(t, "history_floor");
  turn.history_basis = t.value("history_basis", "");
  turn.answer = t.value("answer", "");
  turn.wait_ms = optional_at<double>(t, "wait_ms");
  if (r.version < 2 && r.queue_ms) {  // version 1 wrote a turn's wait as its queue_ms
    turn.wait_ms = r.queue_ms;
    r.queue_ms.reset();
  }
  return turn;
}

CallRecord::Replay replay_from_json(const nlohmann::json& t) {
  CallRecord::Replay out;
  out.index = t.value("index", 0);
  out.due_ms = t.value("due_ms", 0.0);
  out.sent_ms = optional_at<double>(t, "sent_ms");
  out.input_tokens = t.value("input_tokens", 0);
  out.output_tokens = t.value("output_tokens", 0);
  out.blocks = t.value("blocks", 0);
  out.block_tokens = t.value("block_tokens", 0);
  out.infinite_tokens = t.value("predicted_infinite_tokens", 0);
  out.infinite_blocks = t.value("predicted_infinite_blocks", 0);
  out.predicted_tokens = optional_at<int>(t, "predicted_tokens");
  out.predicted_slot = optional_at<int>(t, "predicted_slot");
  out.working_set_blocks = optional_at<long long>(t, "working_set_blocks");
  out.lead_tokens = t.value("lead_tokens", 0);
  out.materialized = optional_at<bool>(t, "materialized");
  out.predicted_from = t.value("predicted_from", "");
  const auto text = [&](const char* key) {
    return t.contains(key) && t[key].is_string() ? t[key].get<std::string>() : std::string();
  };
  out.loss = text("loss");
  out.mismatch = text("mismatch");
  return out;
}

}  // namespace

CallRecord record_from_json(const nlohmann::json& j) {
  CallRecord r;
  r.version = j.value("version", kRecordVersion);
  r.run_id = j.value("run_id", "");
  r.seq = j.at("seq").get<int>();
  r.block = j.value("block", 0);
  r.round = j.value("round", 0);
  r.kind = call_kind_from(j.value("kind", "timed"));
  r.prompt_tokens = j.value("prompt_tokens", 0);
  r.num_ctx = j.value("num_ctx", 0);
  r.cache_type = j.value("cache_type", "");
  r.variant = j.value("variant", "");
  r.nonce = j.value("nonce", "");
  r.prompt_tokens_counted = optional_at<int>(j, "prompt_tokens_counted");
  r.t_start_s = j.value("t_start_s", 0.0);
  r.wall_start = j.value("wall_start", "");
  r.outcome = outcome_from(j.value("outcome", "ok"));
  r.http_status = optional_at<long>(j, "http_status");
  r.error = j.value("error", "");
  r.expected_cache_n = optional_at<int>(j, "expected_cache_n");
  r.flags = j.value("flags", std::vector<std::string>{});
  r.slots = optional_at<int>(j, "slots");
  r.stream = optional_at<int>(j, "stream");
  r.in_flight = optional_at<int>(j, "in_flight");
  r.queue_ms = optional_at<double>(j, "queue_ms");
  r.cpu_mhz = optional_at<double>(j, "cpu_mhz");
  if (j.contains("pair") && j["pair"].is_object()) {
    const auto& p = j["pair"];
    r.pair_id = optional_at<int>(p, "id");
    r.pair_role = pair_role_from(p.value("role", ""));
    r.edit_position = p.value("edit_position", "");
    r.edit_first_diff = optional_at<int>(p, "first_diff");
    r.edit_text_fraction = optional_at<double>(p, "text_fraction");
    r.edit = p.value("edit", "");
  }
  if (j.contains("conversation") && j["conversation"].is_object()) {
    r.turn = turn_from_json(j["conversation"], r);
  }
  if (j.contains("trace") && j["trace"].is_object()) {
    r.replay = replay_from_json(j["trace"]);
  }
  if (j.contains("client")) {
    const auto& c = j["client"];
    r.client.tokens = c.value("tokens", 0);
    r.client.token_ms = c.value("token_ms", std::vector<double>{});
    r.client.ttft_ms = optional_at<double>(c, "ttft_ms");
    r.client.first_byte_ms = optional_at<double>(c, "first_byte_ms");
    r.client.request_out_ms = optional_at<double>(c, "request_out_ms");
    r.client.e2e_ms = optional_at<double>(c, "e2e_ms");
    r.client.decode_tps = optional_at<double>(c, "decode_tps");
    r.client.first_event_ms = optional_at<double>(c, "first_event_ms");
    r.client.first_reasoning_ms = optional_at<double>(c, "first_reasoning_ms");
    r.client.reasoning_tokens = c.value("reasoning_tokens", 0);
  }
  if (j.contains("server")) {
    const auto& s = j["server"];
    r.server.raw = s.value("raw", nlohmann::json::object());
    r.server.prompt_n = optional_at<int>(s, "prompt_n");
    r.server.prompt_total = optional_at<int>(s, "prompt_total");
    r.server.cache_n = optional_at<int>(s, "cache_n");
    r.server.prompt_ms = optional_at<double>(s, "prompt_ms");
    r.server.predicted_n = optional_at<int>(s, "predicted_n");
    r.server.predicted_ms = optional_at<double>(s, "predicted_ms");
    r.server.decode_tps = optional_at<double>(s, "decode_tps");
  }
  return r;
}

}  // namespace kvbench
