#include "harness/core/call_fields.h"

#include <optional>

#include <fmt/format.h>

namespace kvbench {

namespace {

using Type = CallField::Type;

FieldValue whole(long long v) {
  return static_cast<std::int64_t>(v);
}

FieldValue text(std::string_view v) {
  return std::string(v);
}

// A turn's field, absent on a single prompt.
template <typename Fn>
FieldValue of_turn(const CallRecord& r, Fn&& fn) {
  return r.turn ? fn(*r.turn) : FieldValue{};
}

// A replayed request's field, absent on other calls.
template <typename Fn>
FieldValue of_replay(const CallRecord& r, Fn&& fn) {
  return r.replay ? fn(*r.replay) : FieldValue{};
}

// Text that is absent when empty (a null in the record).
FieldValue maybe_text(const std::string& v) {
  return v.empty() ? FieldValue{} : FieldValue(v);
}

FieldValue joined_flags(const CallRecord& r) {
  std::string out;
  for (const auto& f : r.flags) {
    out += (out.empty() ? "" : ";") + f;
  }
  return out;
}

using R = const CallRecord&;

// Added with trace replay (scenario workload "trace").
std::vector<CallField> replay_fields() {
  return {
      {"trace_index", "", Type::integer, true, "trace.index",
       [](R r) { return of_replay(r, [](const auto& t) { return whole(t.index); }); }},
      {"trace_due_ms", "ms", Type::real, true, "trace.due_ms",
       [](R r) { return of_replay(r, [](const auto& t) { return FieldValue(t.due_ms); }); }},
      {"trace_sent_ms", "ms", Type::real, true, "trace.sent_ms",
       [](R r) { return of_replay(r, [](const auto& t) { return field_value(t.sent_ms); }); }},
      {"predicted_infinite_tokens", "tokens", Type::integer, true,
       "trace.predicted_infinite_tokens",
       [](R r) { return of_replay(r, [](const auto& t) { return whole(t.infinite_tokens); }); }},
      {"predicted_tokens", "tokens", Type::integer, true, "trace.predicted_tokens",
       [](R r) {
         return of_replay(r, [](const auto& t) { return field_value(t.predicted_tokens); });
       }},
      {"loss", "", Type::text, true, "trace.loss",
       [](R r) { return of_replay(r, [](const auto& t) { return maybe_text(t.loss); }); }},
      {"mismatch", "", Type::text, true, "trace.mismatch",
       [](R r) { return of_replay(r, [](const auto& t) { return maybe_text(t.mismatch); }); }},
  };
}

}  // namespace

const std::vector<CallField>& call_fields() {
  static const std::vector<CallField> kFields = [] {
    std::vector<CallField> fields = {
        {"seq", "", Type::integer, false, "seq", [](R r) { return whole(r.seq); }},
        {"block", "", Type::integer, false, "block", [](R r) { return whole(r.block); }},
        {"round", "", Type::integer, false, "round", [](R r) { return whole(r.round); }},
        {"kind", "", Type::text, false, "kind", [](R r) { return text(to_string(r.kind)); }},
        {"num_ctx", "tokens", Type::integer, false, "num_ctx",
         [](R r) { return whole(r.num_ctx); }},
        {"cache_type", "", Type::text, false, "cache_type", [](R r) { return text(r.cache_type); }},
        {"prompt_tokens", "tokens", Type::integer, false, "prompt_tokens",
         [](R r) { return whole(r.prompt_tokens); }},
        {"prompt_tokens_counted", "tokens", Type::integer, true, "prompt_tokens_counted",
         [](R r) { return field_value(r.prompt_tokens_counted); }},
        {"t_start_s", "s", Type::real, false, "t_start_s",
         [](R r) { return FieldValue(r.t_start_s); }},
        {"outcome", "", Type::text, false, "outcome",
         [](R r) { return text(to_string(r.outcome)); }},
        {"ttft_ms", "ms", Type::real, true, "client.ttft_ms",
         [](R r) { return field_value(r.client.ttft_ms); }},
        {"decode_tps", "tokens/s", Type::real, true, "client.decode_tps",
         [](R r) { return field_value(r.client.decode_tps); }},
        {"e2e_ms", "ms", Type::real, true, "client.e2e_ms",
         [](R r) { return field_value(r.client.e2e_ms); }},
        {"tokens", "tokens", Type::integer, false, "client.tokens",
         [](R r) { return whole(r.client.tokens); }},
        {"server_prompt_n", "tokens", Type::integer, true, "server.prompt_n",
         [](R r) { return field_value(r.server.prompt_n); }},
        {"server_cache_n", "tokens", Type::integer, true, "server.cache_n",
         [](R r) { return field_value(r.server.cache_n); }},
        {"expected_cache_n", "tokens", Type::integer, true, "expected_cache_n",
         [](R r) { return field_value(r.expected_cache_n); }},
        {"server_prompt_ms", "ms", Type::real, true, "server.prompt_ms",
         [](R r) { return field_value(r.server.prompt_ms); }},
        {"server_predicted_n", "tokens", Type::integer, true, "server.predicted_n",
         [](R r) { return field_value(r.server.predicted_n); }},
        {"server_predicted_ms", "ms", Type::real, true, "server.predicted_ms",
         [](R r) { return field_value(r.server.predicted_ms); }},
        {"flags", "", Type::text, false, "flags", joined_flags},
        {"variant", "", Type::text, false, "variant", [](R r) { return text(r.variant); }},
        {"conversation", "", Type::integer, true, "conversation.conversation",
         [](R r) { return of_turn(r, [](const auto& t) { return whole(t.conversation); }); }},
        {"turn", "", Type::integer, true, "conversation.turn",
         [](R r) { return of_turn(r, [](const auto& t) { return whole(t.turn); }); }},
        {"conversations", "", Type::integer, true, "conversation.conversations",
         [](R r) { return of_turn(r, [](const auto& t) { return whole(t.conversations); }); }},
        {"reuse", "", Type::text, true, "conversation.reuse",
         [](R r) {
           return of_turn(r, [](const auto& t) { return text(t.reuse ? "on" : "off"); });
         }},
        {"history_tokens", "tokens", Type::integer, true, "conversation.history_tokens",
         [](R r) {
           return of_turn(r, [](const auto& t) { return field_value(t.history_tokens); });
         }},
        // Added to the CSV with the list (the history's calls table had them).
        {"wall_start", "", Type::text, false, "wall_start", [](R r) { return text(r.wall_start); }},
        {"http_status", "", Type::integer, true, "http_status",
         [](R r) { return field_value(r.http_status); }},
        {"server_decode_tps", "tokens/s", Type::real, true, "server.decode_tps",
         [](R r) { return field_value(r.server.decode_tps); }},
        {"stream", "", Type::integer, true, "stream", [](R r) { return field_value(r.stream); }},
        {"in_flight", "", Type::integer, true, "in_flight",
         [](R r) { return field_value(r.in_flight); }},
        {"queue_ms", "ms", Type::real, true, "queue_ms",
         [](R r) { return field_value(r.queue_ms); }},
        // Added with record version 2, when a turn's wait left queue_ms.
        {"wait_ms", "ms", Type::real, true, "conversation.wait_ms",
         [](R r) { return of_turn(r, [](const auto& t) { return field_value(t.wait_ms); }); }},
    };
    const auto replay = replay_fields();
    fields.insert(fields.end(), replay.begin(), replay.end());
    return fields;
  }();
  return kFields;
}

std::string csv_text(const FieldValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return fmt::format("{:.3f}", *d);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    return *s;
  }
  return {};
}

}  // namespace kvbench
