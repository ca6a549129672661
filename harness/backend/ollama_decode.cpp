// The pure half of the Ollama backend: request bodies, stream decoding, metrics, the token
// calibration fit and the model shape from /api/show.

#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "harness/backend/completion_stream.h"
#include "harness/backend/json_error.h"
#include "harness/backend/json_fields.h"
#include "harness/backend/json_scan.h"
#include "harness/backend/ollama.h"
#include "harness/core/error.h"
#include "harness/gguf/gguf.h"

namespace kvbench::backend {

using nlohmann::json;

namespace {

json options_for(const OllamaTarget& target, int num_predict, std::uint64_t seed) {
  json o = {{"num_ctx", target.num_ctx},
            {"num_predict", num_predict},
            {"temperature", 0.0},
            {"seed", seed}};
  if (target.num_gpu >= 0) {
    o["num_gpu"] = target.num_gpu;
  }
  if (target.num_batch) {
    o["num_batch"] = *target.num_batch;
  }
  return o;
}

}  // namespace

json generate_body(const CompletionSpec& spec, const OllamaTarget& target) {
  return {{"model", target.model},
          {"prompt", spec.prompt},
          {"raw", true},
          {"stream", true},
          {"keep_alive", target.keep_alive},
          {"options", options_for(target, spec.max_tokens, spec.seed)}};
}

json chat_body(const CompletionSpec& spec, const OllamaTarget& target) {
  json messages = json::array();
  for (const auto& m : spec.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  return {{"model", target.model},
          {"messages", std::move(messages)},
          {"stream", true},
          {"keep_alive", target.keep_alive},
          {"options", options_for(target, spec.max_tokens, spec.seed)}};
}

json probe_body(std::string_view prompt, int num_predict, const OllamaTarget& target) {
  return {{"model", target.model},
          {"prompt", prompt},
          {"raw", true},
          {"stream", false},
          {"keep_alive", target.keep_alive},
          {"options", options_for(target, num_predict, 0)}};
}

namespace {

// The members of a line that decode a "done": false line.
constexpr std::array<std::string_view, 4> kPartialLineKeys = {"error", "done", "response",
                                                              "message"};

// The common case without a document: a line with "done": false and no error. Gives what
// decode_generate_line_dom gives for it; std::nullopt for anything else.
std::optional<GenerateEvent> decode_partial_line(std::string_view line) {
  using Kind = ScannedMember::Kind;
  std::array<ScannedMember, kPartialLineKeys.size()> m;
  if (!scan_members(line, kPartialLineKeys, m)) {
    return std::nullopt;
  }
  const auto& [error, done, response, message] = m;
  // An /api/chat line (its "message" object) is read through a document.
  if (error.kind != Kind::absent || done.kind != Kind::boolean || done.boolean ||
      message.kind != Kind::absent) {
    return std::nullopt;
  }
  GenerateEvent ev;
  ev.type = GenerateEvent::Type::partial;
  ev.has_token = response.kind == Kind::string && response.size > 0;
  return ev;
}

}  // namespace

GenerateEvent decode_generate_line(std::string_view line) {
  if (auto ev = decode_partial_line(line)) {
    return std::move(*ev);
  }
  return decode_generate_line_dom(line);
}

GenerateEvent decode_generate_line_dom(std::string_view line) {
  GenerateEvent ev;
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    ev.type = GenerateEvent::Type::error;
    ev.error = fmt::format("malformed stream line: {:.200}", line);
    return ev;
  }
  if (j.contains("error")) {
    ev.type = GenerateEvent::Type::error;
    ev.error = error_text(j["error"]);
    return ev;
  }
  if (!j.contains("done") || !j["done"].is_boolean()) {
    ev.type = GenerateEvent::Type::error;
    ev.error = fmt::format("stream line without \"done\": {:.200}", line);
    return ev;
  }
  if (j["done"].get<bool>()) {
    ev.type = GenerateEvent::Type::final;
    j.erase("context");
    ev.message = std::move(j);
    return ev;
  }
  const auto r = j.find("response");
  ev.has_token = r != j.end() && r->is_string() && !r->get_ref<const std::string&>().empty();
  if (const auto m = j.find("message");
      m != j.end() && m->is_object() && json_has_text(*m, "content")) {
    ev.has_token = true;
    ev.text = (*m)["content"].get<std::string>();
  }
  return ev;
}

ServerTiming parse_ollama_metrics(const json& m) {
  ServerTiming s;
  if (!m.is_object()) {
    return s;
  }
  static constexpr const char* kRaw[] = {
      "total_duration", "load_duration", "prompt_eval_count",        "prompt_eval_duration",
      "eval_count",     "eval_duration", "prompt_eval_cached_count", "done_reason"};
  for (const char* k : kRaw) {
    if (m.contains(k)) {
      s.raw[k] = m[k];
    }
  }
  auto num = [&](const char* k) -> std::optional<double> {
    if (m.contains(k) && m[k].is_number()) {
      return m[k].get<double>();
    }
    return std::nullopt;
  };
  if (auto v = num("prompt_eval_count")) {
    s.prompt_n = static_cast<int>(*v);
    s.prompt_total = s.prompt_n;  // prompt_eval_count is the whole prompt, reuse included
  }
  if (auto v = num("eval_count")) {
    s.predicted_n = static_cast<int>(*v);
  }
  // Newer Ollama (about 0.33.3) reports the prompt tokens it reused; prompt_eval_count stays the
  // whole prompt. Older servers leave it out: no cache_n, reuse inferred from time only.
  s.cache_n = json_count(m, "prompt_eval_cached_count");
  if (auto v = num("prompt_eval_duration")) {
    s.prompt_ms = *v / 1e6;
  }
  if (auto v = num("eval_duration")) {
    s.predicted_ms = *v / 1e6;
  }
  if (s.predicted_n && s.predicted_ms && *s.predicted_ms > 0) {
    s.decode_tps = *s.predicted_n / (*s.predicted_ms / 1000.0);
  }
  return s;
}

bool GenerateStreamDecoder::feed(std::string_view chunk, Nanos arrival) {
  framer_.feed(chunk, arrival, lines_);
  for (const auto& l : lines_) {
    on_line(l);
  }
  lines_.clear();
  return error_.empty();
}

void GenerateStreamDecoder::finish() {
  framer_.finish(lines_);
  for (const auto& l : lines_) {
    on_line(l);
  }
  lines_.clear();
}

CallResult GenerateStreamDecoder::result(const http::Result& res) {
  finish();
  CallResult r;
  r.trace = trace_;
  r.server = server_;
  r.text = text_;
  return streamed_result(std::move(r), res, error_, final_seen_,
                         "the stream ended without a final (done: true) line");
}

void GenerateStreamDecoder::on_line(const http::NdjsonLine& line) {
  if (!error_.empty()) {
    return;  // nothing after an error line counts
  }
  const auto ev = decode_generate_line(line.text);
  switch (ev.type) {
    case GenerateEvent::Type::error:
      error_ = ev.error;
      return;
    case GenerateEvent::Type::final:
      final_seen_ = true;
      final_ = ev.message;
      server_ = parse_ollama_metrics(ev.message);
      return;
    case GenerateEvent::Type::partial:
      if (ev.has_token) {
        trace_.token_arrivals.push_back(line.arrival);
        trace_.token_counts.push_back(1);
      }
      text_ += ev.text;
      return;
  }
}

int TokenCalibration::estimate(std::string_view text) const {
  const double t = intercept + tokens_per_byte * static_cast<double>(text.size());
  return std::max(1, static_cast<int>(std::lround(t)));
}

json TokenCalibration::to_json() const {
  json pts = json::array();
  for (const auto& [bytes, tokens] : points) {
    pts.push_back({{"bytes", bytes}, {"tokens", tokens}});
  }
  return {{"intercept_tokens", intercept},
          {"tokens_per_byte", tokens_per_byte},
          {"counted_by", counted_by},
          {"probes", pts}};
}

TokenCalibration fit_calibration(const std::vector<std::pair<std::size_t, int>>& points) {
  const double n = static_cast<double>(points.size());
  double sx = 0;
  double sy = 0;
  for (const auto& [x, y] : points) {
    sx += static_cast<double>(x);
    sy += y;
  }
  const double mx = sx / std::max(n, 1.0);
  const double my = sy / std::max(n, 1.0);
  double sxx = 0;
  double sxy = 0;
  for (const auto& [x, y] : points) {
    sxx += (static_cast<double>(x) - mx) * (static_cast<double>(x) - mx);
    sxy += (static_cast<double>(x) - mx) * (y - my);
  }
  if (points.size() < 2 || sxx <= 0) {
    throw Error("token calibration needs probes of at least two different lengths");
  }
  TokenCalibration c;
  c.tokens_per_byte = sxy / sxx;
  c.intercept = my - c.tokens_per_byte * mx;
  c.points = points;
  if (!(c.tokens_per_byte > 0)) {
    throw Error(
        fmt::format("token calibration failed: prompt_eval_count did not grow with the prompt ({})",
                    c.to_json().dump()));
  }
  return c;
}

namespace {

std::optional<gguf::Value> gguf_value(const json& v) {
  if (v.is_string()) {
    return gguf::Value{v.get<std::string>()};
  }
  if (v.is_boolean()) {
    return gguf::Value{v.get<bool>()};
  }
  const bool natural =
      v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
  if (natural) {
    const auto u = v.get<std::uint64_t>();
    if (u <= std::numeric_limits<std::uint32_t>::max()) {
      return gguf::Value{static_cast<std::uint32_t>(u)};
    }
    return gguf::Value{u};
  }
  if (v.is_number_integer()) {
    return gguf::Value{v.get<std::int64_t>()};
  }
  if (v.is_number_float()) {
    return gguf::Value{v.get<float>()};
  }
  if (v.is_array() && !v.empty() && v[0].is_number_integer()) {
    std::vector<std::uint32_t> items;
    for (const auto& x : v) {
      items.push_back(x.is_number_integer() && x.get<std::int64_t>() >= 0 ? x.get<std::uint32_t>()
                                                                          : 0U);
    }
    return gguf::Value{gguf::Array{std::move(items)}};
  }
  if (v.is_array() && !v.empty() && v[0].is_string()) {
    std::vector<std::string> items;
    for (const auto& x : v) {
      items.push_back(x.is_string() ? x.get<std::string>() : "");
    }
    return gguf::Value{gguf::Array{std::move(items)}};
  }
  return std::nullopt;  // null, empty arrays (a non-verbose /api/show), objects
}

}  // namespace

gguf::ModelShape shape_from_model_info(const json& model_info) {
  if (!model_info.is_object()) {
    throw InputError("/api/show answered without a model_info object");
  }
  gguf::GgufFile file;
  for (const auto& [key, value] : model_info.items()) {
    if (auto v = gguf_value(value)) {
      file.set(key, std::move(*v));
    }
  }
  const auto* arch = file.find("general.architecture");
  if (arch != nullptr && std::holds_alternative<std::string>(arch->data)) {
    const std::string vocab_key = std::get<std::string>(arch->data) + ".vocab_size";
    if (file.find("tokenizer.ggml.tokens") == nullptr && file.find(vocab_key) == nullptr) {
      file.set(vocab_key, gguf::Value{std::uint32_t{0}});
    }
  }
  return gguf::shape_from_metadata(file);
}

std::optional<json> find_ps_entry(const json& ps, const std::string& model) {
  if (!ps.is_object() || !ps.contains("models") || !ps["models"].is_array()) {
    return std::nullopt;
  }
  const std::string tagged = model.find(':') == std::string::npos ? model + ":latest" : model;
  for (const auto& m : ps["models"]) {
    for (const char* k : {"name", "model"}) {
      if (m.contains(k) && m[k].is_string() && (m[k] == model || m[k] == tagged)) {
        return m;
      }
    }
  }
  return std::nullopt;
}

}  // namespace kvbench::backend
