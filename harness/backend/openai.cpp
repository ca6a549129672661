#include "harness/backend/openai.h"

#include <fmt/format.h>

#include "harness/backend/completion_stream.h"
#include "harness/backend/json_error.h"
#include "harness/backend/json_fields.h"
#include "harness/backend/llama_server.h"
#include "harness/core/error.h"
#include "harness/core/utf8.h"

namespace kvbench::backend {

using nlohmann::json;

std::string_view endpoint_path(OpenAiEndpoint e) {
  return e == OpenAiEndpoint::chat ? "/chat/completions" : "/completions";
}

std::string root_of(std::string_view base_url) {
  std::string root(base_url);
  while (!root.empty() && root.back() == '/') {
    root.pop_back();
  }
  if (root.size() >= 3 && root.compare(root.size() - 3, 3, "/v1") == 0) {
    root.resize(root.size() - 3);
  }
  return root;
}

json openai_body(const OpenAiTarget& target, const CompletionSpec& spec) {
  json body = {{"model", target.model}, {"max_tokens", spec.max_tokens},
               {"stream", true},        {"stream_options", {{"include_usage", true}}},
               {"temperature", 0.0},    {"seed", spec.seed}};
  if (target.endpoint == OpenAiEndpoint::chat) {
    body["messages"] = spec.messages.empty()
                           ? json::array({{{"role", "user"}, {"content", spec.prompt}}})
                           : chat_messages_json(spec.messages);
  } else if (!spec.prompt_ids.empty()) {
    body["prompt"] = spec.prompt_ids;
  } else {
    body["prompt"] = spec.prompt;
  }
  if (target.llama_server) {
    body["id_slot"] = spec.slot;
    body["cache_prompt"] = spec.cache_prompt;
    body["ignore_eos"] = true;
  }
  return body;
}

namespace {

OpenAiEvent openai_error_event(const std::string& message) {
  OpenAiEvent ev;
  ev.type = OpenAiEvent::Type::error;
  ev.error =
      message.empty() ? "the server sent an error event without a message" : valid_utf8(message);
  return ev;
}

}  // namespace

OpenAiEvent decode_openai_event(std::string_view event_name, std::string_view data) {
  OpenAiEvent ev;
  if (data == "[DONE]") {
    ev.type = OpenAiEvent::Type::done;
    return ev;
  }
  const json j = json::parse(data, nullptr, false);
  if (event_name == "error") {
    return openai_error_event(j.is_discarded() ? std::string(data)
                                               : error_text(j.contains("error") ? j["error"] : j));
  }
  if (j.is_discarded() || !j.is_object()) {
    return openai_error_event(fmt::format("malformed stream event: {:.200}", data));
  }
  if (j.contains("error") && !j["error"].is_null()) {
    return openai_error_event(error_text(j["error"]));
  }
  ev.type = OpenAiEvent::Type::chunk;
  if (const auto it = j.find("choices"); it != j.end() && it->is_array()) {
    for (const auto& choice : *it) {
      if (!choice.is_object()) {
        continue;
      }
      if (const auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
        if (json_has_text(*d, "content")) {
          ev.content += 1;
          ev.text += (*d)["content"].get<std::string>();
        }
        ev.reasoning +=
            json_has_text(*d, "reasoning_content") || json_has_text(*d, "reasoning") ? 1 : 0;
      }
      if (json_has_text(choice, "text")) {
        ev.content += 1;
        ev.text += choice["text"].get<std::string>();
      }
      if (const auto f = choice.find("finish_reason"); f != choice.end() && !f->is_null()) {
        ev.finished = true;
      }
    }
  }
  if (const auto u = j.find("usage"); u != j.end() && u->is_object()) {
    ev.type = OpenAiEvent::Type::usage;
    ev.usage = *u;
  }
  if (const auto t = j.find("timings"); t != j.end() && t->is_object()) {
    ev.timings = *t;
  }
  return ev;
}

ServerTiming openai_server_timing(const json& usage, const json& timings) {
  ServerTiming s = parse_timings(timings);
  s.raw = json::object();
  if (usage.is_object()) {
    s.raw["usage"] = usage;
  }
  if (timings.is_object()) {
    s.raw["timings"] = timings;
  }
  if (!usage.is_object()) {
    return s;
  }
  std::optional<int> cached;
  if (const auto d = usage.find("prompt_tokens_details"); d != usage.end() && d->is_object()) {
    cached = json_count(*d, "cached_tokens");
  }
  const auto prompt = json_count(usage, "prompt_tokens");
  if (!s.cache_n) {
    s.cache_n = cached;
  }
  if (prompt) {
    s.prompt_total = prompt;
  }
  if (!s.prompt_n && prompt) {
    s.prompt_n = *prompt - std::min(*prompt, cached.value_or(0));
  }
  if (!s.predicted_n) {
    s.predicted_n = json_count(usage, "completion_tokens");
  }
  return s;
}

void OpenAiStream::on_event(const http::SseEventView& sse) {
  const auto ev = decode_openai_event(sse.event, sse.data);
  switch (ev.type) {
    case OpenAiEvent::Type::error:
      error(ev.error);
      return;
    case OpenAiEvent::Type::done:
      end_seen();
      return;
    case OpenAiEvent::Type::ignored:
      return;
    case OpenAiEvent::Type::chunk:
    case OpenAiEvent::Type::usage:
      break;
  }
  content(ev.content, sse.arrival);
  text(ev.text);
  reasoning(ev.reasoning, sse.arrival);
  if (ev.type == OpenAiEvent::Type::usage) {
    usage_ = ev.usage;
    end_seen();
  }
  if (ev.timings.is_object()) {
    timings_ = ev.timings;
  }
}

OpenAiBackend::OpenAiBackend(http::Transport& transport, OpenAiTarget target)
    : transport_(transport), target_(std::move(target)) {}

http::Request OpenAiBackend::request(std::string method, const std::string& url,
                                     std::string body) const {
  http::Request r;
  r.method = std::move(method);
  r.url = url;
  r.body = std::move(body);
  r.headers = bearer_header(target_.api_key);
  return r;
}

http::Request OpenAiBackend::stream_request(const CompletionSpec& spec) const {
  auto req = request("POST", target_.base_url + std::string(endpoint_path(target_.endpoint)),
                     openai_body(target_, spec).dump());
  req.timeout = spec.timeout;
  return req;
}

std::unique_ptr<StreamDecoder> OpenAiBackend::open_stream(const CompletionSpec&) {
  return std::make_unique<OpenAiStream>();
}

CallResult OpenAiBackend::complete(const CompletionSpec& spec) {
  return stream_call(*this, transport_, spec);
}

json vllm_tokenize_body(const OpenAiTarget& target, std::string_view text) {
  if (target.endpoint == OpenAiEndpoint::chat) {
    return vllm_chat_tokenize_body(target, {{"user", std::string(text)}});
  }
  return {{"model", target.model}, {"prompt", text}};
}

json vllm_chat_tokenize_body(const OpenAiTarget& target, const std::vector<ChatMessage>& messages) {
  return {{"model", target.model},
          {"messages", chat_messages_json(messages)},
          {"add_generation_prompt", true}};
}

std::optional<std::vector<int>> vllm_tokens(std::string_view body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) {
    return std::nullopt;
  }
  std::vector<int> ids;
  ids.reserve(j["tokens"].size());
  for (const auto& t : j["tokens"]) {
    if (!t.is_number_integer()) {
      return std::nullopt;
    }
    ids.push_back(t.get<int>());
  }
  if (const auto count = json_count(j, "count"); count && *count != static_cast<int>(ids.size())) {
    return std::nullopt;
  }
  return ids;
}

std::vector<int> OpenAiBackend::vllm_tokenize(const json& body) {
  auto req = request("POST", root_of(target_.base_url) + "/tokenize", body.dump());
  req.timeout = std::chrono::milliseconds(60000);
  const auto res = transport_.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    throw Error(fmt::format("{}/tokenize failed: {}", root_of(target_.base_url), res.error));
  }
  auto ids = vllm_tokens(res.body);
  if (!ids) {
    throw Error(fmt::format("{}/tokenize answered without token ids", root_of(target_.base_url)));
  }
  return std::move(*ids);
}

RenderedChat OpenAiBackend::render_chat(const std::vector<ChatMessage>& messages) {
  if (target_.endpoint != OpenAiEndpoint::chat) {
    throw Error("a conversation needs the chat endpoint (server.endpoint \"chat\")");
  }
  if (target_.llama_server) {
    return LlamaServerBackend(transport_, root_of(target_.base_url), target_.api_key)
        .render_chat(messages);
  }
  RenderedChat out;
  if (target_.tokenize_endpoint) {
    out.ids = vllm_tokenize(vllm_chat_tokenize_body(target_, messages));
  }
  return out;
}

std::vector<int> OpenAiBackend::tokenize(std::string_view text) {
  if (target_.tokenize_endpoint && !target_.llama_server) {
    return vllm_tokenize(vllm_tokenize_body(target_, text));
  }
  if (!target_.llama_server) {
    return {};
  }
  const std::string root = root_of(target_.base_url);
  if (target_.endpoint == OpenAiEndpoint::completions) {
    return LlamaServerBackend(transport_, root, target_.api_key).tokenize(text);
  }
  return templated_ids(transport_, root, target_.api_key, text);
}

int OpenAiBackend::count_tokens(std::string_view text) {
  if (target_.llama_server || target_.tokenize_endpoint) {
    return static_cast<int>(tokenize(text).size());
  }
  if (!calibration_) {
    throw Error(
        "the token count of an OpenAI-compatible server is estimated from a calibration "
        "that has not run");
  }
  return calibration_->estimate(text);
}

json OpenAiBackend::describe() {
  json out = json::object();
  auto req = request("GET", target_.base_url + "/models", "");
  req.timeout = std::chrono::milliseconds(10000);
  const auto res = transport_.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    out["models_error"] = res.error;
  } else {
    const json j = json::parse(res.body, nullptr, false);
    out["models"] = j.is_discarded() ? json("not JSON") : j;
  }
  if (target_.llama_server) {
    LlamaServerBackend native(transport_, root_of(target_.base_url), target_.api_key);
    out["props"] = native.describe();
  }
  return out;
}

const TokenCalibration& OpenAiBackend::calibrate(const std::vector<std::string>& probe_texts) {
  std::vector<std::pair<std::size_t, int>> points;
  for (const auto& text : probe_texts) {
    CompletionSpec spec;
    spec.prompt = text;
    spec.max_tokens = 1;
    spec.timeout = std::chrono::milliseconds(120000);
    const auto res = complete(spec);
    if (res.outcome != Outcome::ok) {
      throw Error(fmt::format("a calibration probe to {} failed ({}: {})", target_.base_url,
                              to_string(res.outcome), res.error));
    }
    const auto usage = res.server.raw.value("usage", json::object());
    const auto prompt = json_count(usage, "prompt_tokens");
    if (!prompt) {
      throw Error(fmt::format(
          "a calibration probe to {} reported no usage.prompt_tokens: the server cannot count "
          "prompt tokens, so prompts cannot be sized",
          target_.base_url));
    }
    points.emplace_back(text.size(), *prompt);
  }
  calibration_ = fit_calibration(points);
  calibration_->counted_by = "usage.prompt_tokens";
  return *calibration_;
}

std::string apply_chat_template(http::Transport& transport, const std::string& root,
                                const std::string& api_key, std::string_view text) {
  return apply_template(transport, root, api_key, {{"user", std::string(text)}});
}

}  // namespace kvbench::backend
