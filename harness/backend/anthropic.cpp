#include "harness/backend/anthropic.h"

#include <fmt/format.h>

#include "harness/backend/completion_stream.h"
#include "harness/backend/json_error.h"
#include "harness/backend/json_fields.h"
#include "harness/backend/llama_server.h"
#include "harness/backend/openai.h"
#include "harness/core/error.h"
#include "harness/core/utf8.h"

namespace kvbench::backend {

using nlohmann::json;

json anthropic_body(const AnthropicTarget& target, const CompletionSpec& spec) {
  json body = {{"model", target.model},
               {"max_tokens", spec.max_tokens},
               {"stream", true},
               {"temperature", 0.0},
               {"messages", json::array({{{"role", "user"}, {"content", spec.prompt}}})}};
  if (!spec.messages.empty()) {
    // A conversation: the system message goes to the top-level "system"; the rest alternate.
    json messages = json::array();
    for (const auto& m : spec.messages) {
      if (m.role == "system") {
        body["system"] = m.content;
      } else {
        messages.push_back({{"role", m.role}, {"content", m.content}});
      }
    }
    body["messages"] = std::move(messages);
  }
  if (target.breakpoint_at_end && !body["messages"].empty()) {
    // The breakpoint on the last user message: everything before it may be cached.
    json& last = body["messages"].back();
    last["content"] = json::array({{{"type", "text"},
                                    {"text", last["content"].get<std::string>()},
                                    {"cache_control", {{"type", "ephemeral"}}}}});
  }
  if (target.llama_server) {
    body["id_slot"] = spec.slot;
    body["cache_prompt"] = spec.cache_prompt;
    body["ignore_eos"] = true;
    body["seed"] = spec.seed;
  }
  return body;
}

namespace {

AnthropicEvent anthropic_error_event(const std::string& message) {
  AnthropicEvent ev;
  ev.type = AnthropicEvent::Type::error;
  ev.error =
      message.empty() ? "the server sent an error event without a message" : valid_utf8(message);
  return ev;
}

// The message of an error object: {"type": "overloaded_error", "message": ".."} reads
// "overloaded_error: ..".
std::string anthropic_error(const json& e) {
  if (e.is_object() && e.contains("type") && e["type"].is_string() && e.contains("message")) {
    return fmt::format("{}: {}", e["type"].get<std::string>(), error_text(e));
  }
  return error_text(e);
}

}  // namespace

AnthropicEvent decode_anthropic_event(std::string_view event_name, std::string_view data) {
  const json j = json::parse(data, nullptr, false);
  if (event_name == "error" && j.is_discarded()) {
    return anthropic_error_event(std::string(data));
  }
  if (j.is_discarded() || !j.is_object()) {
    return anthropic_error_event(fmt::format("malformed stream event: {:.200}", data));
  }
  std::string type(event_name == "message" ? "" : event_name);
  if (type.empty() && j.contains("type") && j["type"].is_string()) {
    type = j["type"].get<std::string>();
  }
  AnthropicEvent ev;
  if (type == "error" || (j.contains("error") && !j["error"].is_null())) {
    return anthropic_error_event(anthropic_error(j.contains("error") ? j["error"] : j));
  }
  if (type == "message_start") {
    ev.type = AnthropicEvent::Type::start;
    if (const auto m = j.find("message"); m != j.end() && m->is_object()) {
      ev.usage = m->value("usage", json::object());
    }
  } else if (type == "content_block_delta") {
    ev.type = AnthropicEvent::Type::delta;
    if (const auto d = j.find("delta"); d != j.end() && d->is_object()) {
      ev.content = json_has_text(*d, "text") ? 1 : 0;
      if (ev.content > 0) {
        ev.text = (*d)["text"].get<std::string>();
      }
      ev.reasoning = json_has_text(*d, "thinking") ? 1 : 0;
    }
  } else if (type == "message_delta") {
    ev.type = AnthropicEvent::Type::message_delta;
    ev.usage = j.value("usage", json::object());
  } else if (type == "message_stop") {
    ev.type = AnthropicEvent::Type::stop;
  }
  return ev;
}

ServerTiming anthropic_server_timing(const json& start_usage, const json& end_usage) {
  ServerTiming s;
  s.raw = json::object();
  if (start_usage.is_object()) {
    s.raw["start_usage"] = start_usage;
  }
  if (end_usage.is_object()) {
    s.raw["usage"] = end_usage;
  }
  // A field the final usage repeats wins over message_start's.
  auto field = [&](const char* key) {
    const auto end = json_count(end_usage, key);
    return end ? end : json_count(start_usage, key);
  };
  s.cache_n = field("cache_read_input_tokens");
  const auto input = field("input_tokens");
  if (input) {
    s.prompt_n = *input + field("cache_creation_input_tokens").value_or(0);
    s.prompt_total = *s.prompt_n + s.cache_n.value_or(0);
  }
  s.predicted_n = json_count(end_usage, "output_tokens");
  return s;
}

void AnthropicStream::on_event(const http::SseEventView& sse) {
  const auto ev = decode_anthropic_event(sse.event, sse.data);
  switch (ev.type) {
    case AnthropicEvent::Type::error:
      error(ev.error);
      return;
    case AnthropicEvent::Type::start:
      start_usage_ = ev.usage;
      return;
    case AnthropicEvent::Type::message_delta:
      end_usage_ = ev.usage;
      return;
    case AnthropicEvent::Type::stop:
      end_seen();
      return;
    case AnthropicEvent::Type::ignored:
      return;
    case AnthropicEvent::Type::delta:
      break;
  }
  content(ev.content, sse.arrival);
  text(ev.text);
  reasoning(ev.reasoning, sse.arrival);
}

AnthropicBackend::AnthropicBackend(http::Transport& transport, AnthropicTarget target)
    : transport_(transport), target_(std::move(target)) {}

std::vector<std::pair<std::string, std::string>> anthropic_headers(const std::string& api_key) {
  std::vector<std::pair<std::string, std::string>> h = {
      {"anthropic-version", std::string(kAnthropicVersion)}};
  if (!api_key.empty()) {
    h.emplace_back("x-api-key", api_key);
  }
  return h;
}

http::Request AnthropicBackend::request(std::string method, const std::string& url,
                                        std::string body) const {
  http::Request r;
  r.method = std::move(method);
  r.url = url;
  r.body = std::move(body);
  r.headers = anthropic_headers(target_.api_key);
  return r;
}

http::Request AnthropicBackend::stream_request(const CompletionSpec& spec) const {
  auto req = request("POST", target_.base_url + "/messages", anthropic_body(target_, spec).dump());
  req.timeout = spec.timeout;
  return req;
}

std::unique_ptr<StreamDecoder> AnthropicBackend::open_stream(const CompletionSpec&) {
  return std::make_unique<AnthropicStream>();
}

CallResult AnthropicBackend::complete(const CompletionSpec& spec) {
  return stream_call(*this, transport_, spec);
}

std::vector<int> AnthropicBackend::tokenize(std::string_view text) {
  if (!target_.llama_server) {
    return {};
  }
  return templated_ids(transport_, root_of(target_.base_url), target_.api_key, text);
}

RenderedChat AnthropicBackend::render_chat(const std::vector<ChatMessage>& messages) {
  if (!target_.llama_server) {
    return {};
  }
  return LlamaServerBackend(transport_, root_of(target_.base_url), target_.api_key)
      .render_chat(messages);
}

int AnthropicBackend::count_tokens(std::string_view text) {
  if (target_.llama_server) {
    return static_cast<int>(tokenize(text).size());
  }
  const json body = {{"model", target_.model},
                     {"messages", json::array({{{"role", "user"}, {"content", text}}})}};
  auto req = request("POST", target_.base_url + "/messages/count_tokens", body.dump());
  req.timeout = std::chrono::milliseconds(60000);
  const auto res = transport_.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    throw Error(fmt::format("{}/messages/count_tokens failed: {}", target_.base_url, res.error));
  }
  const json j = json::parse(res.body, nullptr, false);
  const auto n = j.is_discarded() ? std::nullopt : json_count(j, "input_tokens");
  if (!n) {
    throw Error(
        fmt::format("{}/messages/count_tokens answered without input_tokens", target_.base_url));
  }
  return *n;
}

json AnthropicBackend::describe() {
  json out = json::object();
  if (target_.llama_server) {
    LlamaServerBackend native(transport_, root_of(target_.base_url), target_.api_key);
    out["props"] = native.describe();
  }
  return out;
}

}  // namespace kvbench::backend
