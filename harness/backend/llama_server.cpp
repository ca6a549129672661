#include "harness/backend/llama_server.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "harness/backend/completion_stream.h"
#include "harness/backend/json_error.h"
#include "harness/backend/json_scan.h"
#include "harness/core/error.h"
#include "harness/core/utf8.h"

namespace kvbench::backend {

using nlohmann::json;

json completion_body(const CompletionSpec& spec) {
  json body = {{"prompt", spec.prompt}, {"n_predict", spec.max_tokens},
               {"stream", true},        {"cache_prompt", spec.cache_prompt},
               {"temperature", 0.0},    {"seed", spec.seed},
               {"ignore_eos", true},    {"id_slot", spec.slot}};
  if (!spec.prompt_ids.empty()) {
    body["prompt"] = spec.prompt_ids;
  }
  if (!spec.messages.empty() || !spec.prompt_ids.empty()) {
    body["return_tokens"] = true;  // a turn, a replayed request: what the slot holds after it
  }
  return body;
}

namespace {

int tokens_in(const json& j) {
  if (j.contains("tokens") && j["tokens"].is_array() && !j["tokens"].empty()) {
    return static_cast<int>(j["tokens"].size());
  }
  if (j.contains("content") && j["content"].is_string() &&
      !j["content"].get_ref<const std::string&>().empty()) {
    return 1;
  }
  return 0;
}

// An error event; its message is never empty and always valid UTF-8 (it goes into a record).
CompletionEvent error_event(const std::string& message) {
  CompletionEvent ev;
  ev.type = CompletionEvent::Type::error;
  ev.error =
      message.empty() ? "the server sent an error event without a message" : valid_utf8(message);
  return ev;
}

// A number that is an integer in 0..INT_MAX, such as a token count; std::nullopt otherwise.
std::optional<int> count_value(double v) {
  if (!(v >= 0 && v <= std::numeric_limits<int>::max()) || v != std::floor(v)) {
    return std::nullopt;
  }
  return static_cast<int>(v);
}

// An integer member in 0..INT_MAX, such as a token count; std::nullopt when absent or not one.
std::optional<int> count_member(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) {
    return std::nullopt;
  }
  return count_value(it->get<double>());
}

// The members of a data object that decode a token event.
constexpr std::array<std::string_view, 5> kTokenEventKeys = {"error", "stop", "tokens", "content",
                                                             "tokens_predicted"};

// The common case without a document: a data object that is neither an error nor final. Gives
// what decode_completion_event_dom gives for it; std::nullopt for anything else.
std::optional<CompletionEvent> decode_token_event(std::string_view data) {
  using Kind = ScannedMember::Kind;
  std::array<ScannedMember, kTokenEventKeys.size()> m;
  if (!scan_members(data, kTokenEventKeys, m)) {
    return std::nullopt;
  }
  const auto& [error, stop, tokens, content, predicted] = m;
  if (error.kind != Kind::absent || (stop.kind == Kind::boolean && stop.boolean)) {
    return std::nullopt;
  }
  CompletionEvent ev;
  ev.type = CompletionEvent::Type::partial;
  if (tokens.kind == Kind::array && tokens.size > 0) {  // as tokens_in
    ev.tokens = static_cast<int>(tokens.size);
  } else if (content.kind == Kind::string && content.size > 0) {
    ev.tokens = 1;
  }
  if (predicted.kind == Kind::number) {
    ev.tokens_predicted = count_value(predicted.number);
  }
  return ev;
}

}  // namespace

CompletionEvent decode_completion_event(std::string_view event_name, std::string_view data) {
  if (event_name != "error" && data != "[DONE]") {
    if (auto ev = decode_token_event(data)) {
      return std::move(*ev);
    }
  }
  return decode_completion_event_dom(event_name, data);
}

CompletionEvent decode_completion_event_dom(std::string_view event_name, std::string_view data) {
  CompletionEvent ev;
  if (data == "[DONE]") {
    return ev;
  }
  json j = json::parse(data, nullptr, false);
  if (event_name == "error") {
    return error_event(j.is_discarded() ? std::string(data)
                                        : error_text(j.contains("error") ? j["error"] : j));
  }
  if (j.is_discarded() || !j.is_object()) {
    return error_event(fmt::format("malformed stream event: {:.200}", data));
  }
  if (j.contains("error")) {
    return error_event(error_text(j["error"]));
  }
  ev.tokens = tokens_in(j);
  if (const auto n = count_member(j, "tokens_predicted")) {
    ev.tokens_predicted = n;
  }
  if (j.contains("stop") && j["stop"].is_boolean() && j["stop"].get<bool>()) {
    ev.type = CompletionEvent::Type::final;
    ev.timings = j.value("timings", json::object());
  } else {
    ev.type = CompletionEvent::Type::partial;
  }
  return ev;
}

ServerTiming parse_timings(const json& t) {
  ServerTiming s;
  if (!t.is_object()) {
    return s;
  }
  s.raw = t;
  auto num = [&](const char* k) -> std::optional<double> {
    if (t.contains(k) && t[k].is_number()) {
      return t[k].get<double>();
    }
    return std::nullopt;
  };
  s.prompt_n = count_member(t, "prompt_n");
  s.cache_n = count_member(t, "cache_n");
  if (s.prompt_n && s.cache_n) {
    s.prompt_total = *s.prompt_n + *s.cache_n;
  }
  s.predicted_n = count_member(t, "predicted_n");
  s.prompt_ms = num("prompt_ms");
  s.predicted_ms = num("predicted_ms");
  if (s.predicted_n && s.predicted_ms && *s.predicted_ms > 0) {
    s.decode_tps = *s.predicted_n / (*s.predicted_ms / 1000.0);
  }
  return s;
}

LlamaServerBackend::LlamaServerBackend(http::Transport& transport, std::string base_url,
                                       std::string api_key)
    : transport_(transport), base_url_(std::move(base_url)), api_key_(std::move(api_key)) {}

http::Request LlamaServerBackend::request(std::string method, std::string path,
                                          std::string body) const {
  http::Request r;
  r.method = std::move(method);
  r.url = base_url_ + path;
  r.body = std::move(body);
  r.headers = bearer_header(api_key_);
  return r;
}

bool LlamaServerBackend::healthy() {
  auto req = request("GET", "/health", "");
  req.timeout = std::chrono::milliseconds(5000);
  const auto res = transport_.fetch(req);
  return res.outcome == http::Outcome::ok && res.http_status == 200;
}

int LlamaServerBackend::count_tokens(std::string_view text) {
  return static_cast<int>(tokenize(text).size());
}

std::vector<int> LlamaServerBackend::tokenize(std::string_view text) {
  const json body = {{"content", text}, {"add_special", true}};
  auto req = request("POST", "/tokenize", body.dump());
  req.timeout = std::chrono::milliseconds(60000);
  const auto res = transport_.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    throw Error(fmt::format("{}/tokenize failed: {}", base_url_, res.error));
  }
  const json j = json::parse(res.body, nullptr, false);
  if (j.is_discarded() || !j.contains("tokens") || !j["tokens"].is_array()) {
    throw Error(fmt::format("{}/tokenize answered without a token list", base_url_));
  }
  std::vector<int> ids;
  ids.reserve(j["tokens"].size());
  for (const auto& t : j["tokens"]) {
    ids.push_back(t.is_number_integer() ? t.get<int>() : t.value("id", -1));
  }
  return ids;
}

json LlamaServerBackend::describe() {
  auto req = request("GET", "/props", "");
  req.timeout = std::chrono::milliseconds(10000);
  const auto res = transport_.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    return {{"error", res.error}};
  }
  json j = json::parse(res.body, nullptr, false);
  if (j.is_discarded()) {
    return {{"error", "GET /props answered with something that is not JSON"}};
  }
  // The prompt of the last call is not server metadata.
  if (j.contains("default_generation_settings") && j["default_generation_settings"].is_object()) {
    j["default_generation_settings"].erase("prompt");
  }
  return j;
}

http::Request LlamaServerBackend::completion_request(const CompletionSpec& spec) const {
  auto req = request("POST", "/completion", completion_body(spec).dump());
  req.timeout = spec.timeout;
  return req;
}

namespace {

class CompletionDecoder final : public StreamDecoder {
 public:
  explicit CompletionDecoder(bool keep_text) : stream_(keep_text) {}
  bool feed(std::string_view chunk, Nanos arrival) override { return stream_.feed(chunk, arrival); }
  CallResult finish(const http::Result& res) override { return stream_.finish(res); }
  const CallTrace& trace() const override { return stream_.trace(); }

 private:
  CompletionStream stream_;
};

}  // namespace

std::unique_ptr<StreamDecoder> LlamaServerBackend::open_stream(const CompletionSpec& spec) {
  return std::make_unique<CompletionDecoder>(!spec.messages.empty() || !spec.prompt_ids.empty());
}

json chat_messages_json(const std::vector<ChatMessage>& messages) {
  json out = json::array();
  for (const auto& m : messages) {
    out.push_back({{"role", m.role}, {"content", m.content}});
  }
  return out;
}

std::string apply_template(http::Transport& transport, const std::string& root,
                           const std::string& api_key, const std::vector<ChatMessage>& messages) {
  const json body = {{"messages", chat_messages_json(messages)}};
  http::Request req;
  req.url = root + "/apply-template";
  req.body = body.dump();
  req.timeout = std::chrono::milliseconds(60000);
  req.headers = bearer_header(api_key);
  const auto res = transport.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    throw Error(fmt::format("{}/apply-template failed: {}", root, res.error));
  }
  const json j = json::parse(res.body, nullptr, false);
  if (j.is_discarded() || !j.contains("prompt") || !j["prompt"].is_string()) {
    throw Error(fmt::format("{}/apply-template answered without a prompt", root));
  }
  return j["prompt"].get<std::string>();
}

RenderedChat LlamaServerBackend::render_chat(const std::vector<ChatMessage>& messages) {
  RenderedChat out;
  out.text = apply_template(transport_, base_url_, api_key_, messages);
  out.ids = tokenize(out.text);
  return out;
}

CallResult LlamaServerBackend::complete(const CompletionSpec& spec) {
  return stream_call(*this, transport_, spec);
}

}  // namespace kvbench::backend
