#include "harness/backend/ollama.h"

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::backend {

using nlohmann::json;
using std::chrono::milliseconds;

OllamaBackend::OllamaBackend(http::Transport& transport, std::string base_url, OllamaTarget target)
    : transport_(transport), base_url_(std::move(base_url)), target_(std::move(target)) {}

OllamaReply OllamaBackend::call(std::string method, const std::string& path, std::string body,
                                milliseconds timeout) {
  http::Request req;
  req.method = std::move(method);
  req.url = base_url_ + path;
  req.body = std::move(body);
  req.timeout = timeout;
  const auto res = transport_.fetch(req);
  OllamaReply r;
  r.outcome = res.outcome;
  r.http_status = res.http_status;
  if (res.outcome != http::Outcome::ok) {
    r.error = res.error.empty() ? std::string(http::to_string(res.outcome)) : res.error;
    return r;
  }
  r.body = json::parse(res.body, nullptr, false);
  if (r.body.is_discarded()) {
    r.error = fmt::format("{} {} answered with something that is not JSON", req.method, path);
  } else if (r.body.is_object() && r.body.contains("error")) {
    r.error =
        r.body["error"].is_string() ? r.body["error"].get<std::string>() : r.body["error"].dump();
  }
  return r;
}

OllamaReply OllamaBackend::version() {
  return call("GET", "/api/version", "", milliseconds(5000));
}

OllamaReply OllamaBackend::show() {
  return call("POST", "/api/show", json{{"model", target_.model}}.dump(), milliseconds(30000));
}

OllamaReply OllamaBackend::ps() {
  return call("GET", "/api/ps", "", milliseconds(10000));
}

OllamaReply OllamaBackend::generate_once(std::string_view prompt, int num_predict) {
  // A load can take minutes for a large model on a slow disk.
  return call("POST", "/api/generate", probe_body(prompt, num_predict, target_).dump(),
              milliseconds(600000));
}

Answer OllamaBackend::answer_text(const std::string& prompt, const AnswerSpec& spec) {
  nlohmann::json body = probe_body(prompt, spec.tokens, target_);
  body["options"]["seed"] = spec.seed;
  body["options"]["top_k"] = 1;
  const auto r = call("POST", "/api/generate", body.dump(), milliseconds(600000));
  Answer a;
  a.text_only = true;
  if (!r.ok()) {
    a.error = r.error.empty() ? "the answer request failed" : r.error;
  } else if (!r.body.contains("response") || !r.body["response"].is_string()) {
    a.error = "the answer has no \"response\" text";
  } else {
    a.text = r.body["response"].get<std::string>();
  }
  return a;
}

OllamaReply OllamaBackend::unload() {
  const nlohmann::json body = {{"model", target_.model}, {"keep_alive", 0}};
  return call("POST", "/api/generate", body.dump(), milliseconds(60000));
}

const TokenCalibration& OllamaBackend::calibrate(const std::vector<std::string>& probe_texts) {
  std::vector<std::pair<std::size_t, int>> points;
  for (const auto& text : probe_texts) {
    const auto r = generate_once(text, 1);
    if (!r.ok()) {
      throw Error(fmt::format("token calibration: {}/api/generate failed: {}", base_url_, r.error));
    }
    if (!r.body.contains("prompt_eval_count") || !r.body["prompt_eval_count"].is_number()) {
      throw Error(fmt::format(
          "token calibration: {}/api/generate reported no prompt_eval_count for a {}-byte probe",
          base_url_, text.size()));
    }
    points.emplace_back(text.size(), r.body["prompt_eval_count"].get<int>());
  }
  calibration_ = fit_calibration(points);
  return *calibration_;
}

int OllamaBackend::count_tokens(std::string_view text) {
  if (!calibration_) {
    throw Error("the Ollama backend counts tokens only after its calibration");
  }
  return calibration_->estimate(text);
}

std::vector<int> OllamaBackend::tokenize(std::string_view /*text*/) {
  return {};
}

json OllamaBackend::describe() {
  json out = json::object();
  const auto v = version();
  out["version"] = v.ok() && v.body.contains("version") ? v.body["version"] : json(nullptr);
  auto s = show();
  if (!s.ok()) {
    out["show_error"] = s.error;
    return out;
  }
  // The template, license and modelfile are long and say nothing about speed or memory.
  for (const char* k : {"license", "modelfile", "template", "system"}) {
    s.body.erase(k);
  }
  if (s.body.contains("model_info") && s.body["model_info"].is_object()) {
    for (const char* k : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                          "tokenizer.ggml.token_type", "tokenizer.ggml.scores"}) {
      s.body["model_info"].erase(k);
    }
  }
  out["show"] = std::move(s.body);
  return out;
}

http::Request OllamaBackend::generate_request(const CompletionSpec& spec) const {
  http::Request req;
  req.method = "POST";
  // A conversation turn goes to /api/chat, which applies the model's template itself.
  const bool chat = !spec.messages.empty();
  req.url = base_url_ + (chat ? "/api/chat" : "/api/generate");
  req.body = (chat ? chat_body(spec, target_) : generate_body(spec, target_)).dump();
  req.timeout = spec.timeout;
  return req;
}

void OllamaBackend::refine_calibration(std::size_t prompt_bytes, const CallResult& call) {
  if (call.outcome != Outcome::ok || !call.server.prompt_n || !calibration_) {
    return;
  }
  auto points = calibration_->points;
  points.emplace_back(prompt_bytes, *call.server.prompt_n);
  try {
    calibration_ = fit_calibration(points);
  } catch (const Error&) {
    // keep the calibration so far: a measurement loop never throws
  }
}

namespace {

class GenerateDecoder final : public StreamDecoder {
 public:
  GenerateDecoder(OllamaBackend& be, std::size_t prompt_bytes)
      : be_(be), prompt_bytes_(prompt_bytes) {}
  bool feed(std::string_view chunk, Nanos arrival) override {
    return decoder_.feed(chunk, arrival);
  }
  CallResult finish(const http::Result& res) override {
    CallResult r = decoder_.result(res);
    if (prompt_bytes_ > 0) {
      be_.refine_calibration(prompt_bytes_, r);
    }
    return r;
  }
  const CallTrace& trace() const override { return decoder_.trace(); }

 private:
  OllamaBackend& be_;
  std::size_t prompt_bytes_;
  GenerateStreamDecoder decoder_;
};

}  // namespace

std::unique_ptr<StreamDecoder> OllamaBackend::open_stream(const CompletionSpec& spec) {
  // A chat turn's prompt is templated out of sight: its length does not refine the calibration.
  return std::make_unique<GenerateDecoder>(*this, spec.messages.empty() ? spec.prompt.size() : 0);
}

CallResult OllamaBackend::complete(const CompletionSpec& spec) {
  return stream_call(*this, transport_, spec);
}

}  // namespace kvbench::backend
