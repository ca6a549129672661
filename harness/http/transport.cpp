#include "harness/http/transport.h"

#include <array>
#include <atomic>

#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "harness/core/utf8.h"

namespace kvbench::http {
namespace {

constexpr std::array<std::pair<Outcome, std::string_view>, 6> kOutcomeNames{{
    {Outcome::ok, "ok"},
    {Outcome::connect_error, "connect_error"},
    {Outcome::timeout, "timeout"},
    {Outcome::http_error, "http_error"},
    {Outcome::stream_error, "stream_error"},
    {Outcome::aborted, "aborted"},
}};

constexpr std::size_t kMaxPlainErrorBytes = 512;

std::atomic<InterruptCheck> g_interrupt_check{nullptr};

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) {
    return {};
  }
  const auto end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

// The message inside a parsed error body, or "" when it has none of the known shapes.
std::string message_from_json(const nlohmann::json& doc) {
  if (!doc.is_object()) {
    return {};
  }
  if (const auto error = doc.find("error"); error != doc.end()) {
    if (error->is_string()) {
      return error->get<std::string>();
    }
    if (error->is_object()) {
      const auto message = error->find("message");
      if (message != error->end() && message->is_string()) {
        return message->get<std::string>();
      }
    }
  }
  const auto message = doc.find("message");
  if (message != doc.end() && message->is_string()) {
    return message->get<std::string>();
  }
  return {};
}

}  // namespace

void set_interrupt_check(InterruptCheck check) {
  g_interrupt_check.store(check);
}

bool interrupted() {
  const InterruptCheck check = g_interrupt_check.load();
  return check != nullptr && check();
}

std::string_view to_string(Outcome outcome) {
  for (const auto& [value, name] : kOutcomeNames) {
    if (value == outcome) {
      return name;
    }
  }
  return "unknown";
}

Outcome outcome_from_string(std::string_view name) {
  for (const auto& [value, known] : kOutcomeNames) {
    if (known == name) {
      return value;
    }
  }
  throw InputError("unknown call outcome '" + std::string(name) +
                   "' (expected one of ok, connect_error, timeout, http_error, stream_error, "
                   "aborted)");
}

kvbench::Outcome call_outcome(Outcome transport) {
  return kvbench::outcome_from(to_string(transport));
}

std::string error_message_from_body(long http_status, std::string_view body) {
  const std::string_view text = trim(body);
  if (text.empty()) {
    return "HTTP " + std::to_string(http_status);
  }
  const auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) {
    if (std::string message = message_from_json(doc); !message.empty()) {
      return message;
    }
  }
  return valid_utf8(text.substr(0, kMaxPlainErrorBytes));  // it goes into a JSON record
}

}  // namespace kvbench::http
