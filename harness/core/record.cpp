#include "harness/core/record.h"

#include <array>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/core/error.h"

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
  nlohmann::json all() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [v, n] : names) {
      out.push_back(n);
    }
    return out;
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

nlohmann::json call_kind_names() {
  return kKinds.all();
}
nlohmann::json pair_role_names() {
  return kRoles.all();
}
nlohmann::json outcome_names() {
  return kOutcomes.all();
}

nlohmann::json to_json(const CallRecord& r) {
  nlohmann::json j = describe::to_json(record_fields(), r);
  if (!r.part.empty()) {
    j[r.part.key()] = r.part.json();
  }
  return j;
}

CallRecord record_from_json(const nlohmann::json& j) {
  CallRecord r;
  describe::from_json(record_fields(), j, r);
  static const std::set<std::string> kCore = [] {
    std::set<std::string> keys;
    for (const auto& f : record_fields()) {
      keys.insert(f.path.substr(0, f.path.find('.')));
    }
    return keys;
  }();
  for (const auto& [key, value] : j.items()) {
    if (value.is_object() && kCore.count(key) == 0) {
      r.part = RecordPart::read(key, value);
      break;
    }
  }
  // Version 1 wrote a turn's wait (the one workload part it had) as the record's queue_ms.
  if (r.version < 2 && !r.part.empty() && r.queue_ms) {
    auto part = r.part.json();
    part["wait_ms"] = *r.queue_ms;
    r.part = RecordPart::read(r.part.key(), std::move(part));
    r.queue_ms.reset();
  }
  return r;
}

}  // namespace kvbench
