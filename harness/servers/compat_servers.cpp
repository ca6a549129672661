#include "harness/servers/compat_servers.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/backend/anthropic.h"
#include "harness/backend/llama_server.h"
#include "harness/backend/openai.h"
#include "harness/backend/prometheus.h"
#include "harness/core/error.h"
#include "harness/servers/ollama_servers.h"
#include "harness/servers/server_target.h"

namespace kvbench::servers {

using nlohmann::json;
using scenario::ServerKind;

std::unique_ptr<backend::Backend> make_call_backend(const scenario::ServerSpec& spec,
                                                    http::Transport& transport,
                                                    const std::string& url,
                                                    const std::string& api_key, bool managed,
                                                    bool llama_server, bool tokenize_endpoint) {
  const std::string base = managed ? url + "/v1" : url;
  switch (spec.kind) {
    case ServerKind::openai:
      return std::make_unique<backend::OpenAiBackend>(
          transport, backend::OpenAiTarget{base, spec.model, api_key,
                                           spec.endpoint == "completions"
                                               ? backend::OpenAiEndpoint::completions
                                               : backend::OpenAiEndpoint::chat,
                                           llama_server, tokenize_endpoint});
    case ServerKind::anthropic:
      return std::make_unique<backend::AnthropicBackend>(
          transport, backend::AnthropicTarget{base, spec.model, api_key, llama_server,
                                              spec.cache_breakpoint == "end"});
    case ServerKind::llama_server:
    case ServerKind::ollama:
      break;
  }
  return std::make_unique<backend::LlamaServerBackend>(transport, url, api_key);
}

std::vector<std::pair<std::string, std::string>> api_headers(scenario::ServerKind kind,
                                                             const std::string& api_key) {
  return kind == ServerKind::anthropic ? backend::anthropic_headers(api_key)
                                       : backend::bearer_header(api_key);
}

bool is_llama_server(http::Transport& transport, const std::string& root,
                     const std::string& api_key) {
  backend::LlamaServerBackend probe(transport, root, api_key);
  const json props = probe.describe();
  return props.is_object() && props.contains("default_generation_settings");
}

bool has_tokenize_endpoint(http::Transport& transport, const std::string& base_url,
                           const scenario::ServerSpec& spec, const std::string& api_key) {
  backend::OpenAiTarget target{base_url,
                               spec.model,
                               api_key,
                               spec.endpoint == "completions" ? backend::OpenAiEndpoint::completions
                                                              : backend::OpenAiEndpoint::chat,
                               false,
                               true};
  http::Request req;
  req.url = backend::root_of(base_url) + "/tokenize";
  req.body = backend::vllm_tokenize_body(target, "kvbench tokenizer probe").dump();
  req.timeout = std::chrono::milliseconds(10000);
  req.headers = backend::bearer_header(api_key);
  const auto res = transport.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    return false;
  }
  const auto ids = backend::vllm_tokens(res.body);
  return ids && !ids->empty();
}

namespace {

class CompatBlock final : public run::BlockServer {
 public:
  // Scrapes the server's /metrics (vLLM, llama-server with --metrics) now and at close().
  CompatBlock(std::unique_ptr<backend::Backend> be, http::Transport& transport, std::string root,
              std::vector<std::pair<std::string, std::string>> headers)
      : backend_(std::move(be)),
        transport_(transport),
        root_(std::move(root)),
        headers_(std::move(headers)),
        at_start_(backend::scrape_metrics(transport_, root_, headers_)) {}
  backend::Backend& backend() override { return *backend_; }
  // An attached server is not restarted by kvbench.
  bool died(results::ServerRestart&) override { return false; }
  bool restart(results::ServerRestart&) override { return false; }
  void after_call(const plan::PlannedCall&) override {}
  void close(results::BlockInfo& info) override {
    info.server_counters =
        results::ServerCounters{at_start_, backend::scrape_metrics(transport_, root_, headers_)};
  }

 private:
  std::unique_ptr<backend::Backend> backend_;
  http::Transport& transport_;
  std::string root_;
  std::vector<std::pair<std::string, std::string>> headers_;
  results::MetricsScrape at_start_;
};

}  // namespace

run::ServersFound CompatServers::prepare() {
  try {
    api_key_ = api_key_from(s_.server);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", s_.source, e.what()));
  }
  json server = {
      {"kind", scenario::to_string(s_.server.kind)}, {"mode", "attached"}, {"url", s_.server.url}};
  if (s_.server.kind == ServerKind::openai) {
    server["endpoint"] = s_.server.endpoint;
  }
  // /models answers on OpenAI-compatible servers, Anthropic's API and llama-server alike.
  http::Request req;
  req.method = "GET";
  req.url = s_.server.url + "/models";
  req.timeout = std::chrono::milliseconds(10000);
  req.headers = api_headers(s_.server.kind, api_key_);
  const auto res = transport_.fetch(req);
  if (res.outcome == http::Outcome::connect_error || res.outcome == http::Outcome::timeout) {
    throw Error(fmt::format("no server answers at {} (GET /models: {}); start it or fix server.url",
                            s_.server.url, res.error));
  }
  if (res.http_status == 401 || res.http_status == 403) {
    throw InputError(fmt::format(
        "{}: the server at {} refused the API key (HTTP {}): check server.api_key_env{}", s_.source,
        s_.server.url, res.http_status, s_.server.api_key_env.empty() ? " (none is set)" : ""));
  }
  server["models_status"] = res.http_status;
  llama_server_ = is_llama_server(transport_, backend::root_of(s_.server.url), api_key_);
  server["llama_server"] = llama_server_;
  tokenize_endpoint_ = !llama_server_ && s_.server.kind == ServerKind::openai &&
                       has_tokenize_endpoint(transport_, s_.server.url, s_.server, api_key_);
  server["tokens"] = llama_server_        ? "llama-server /apply-template + /tokenize"
                     : tokenize_endpoint_ ? "POST /tokenize (vLLM style)"
                     : s_.server.kind == ServerKind::anthropic
                         ? "POST /messages/count_tokens"
                         : "estimated from a calibration against usage.prompt_tokens";
  if (s_.server.cache_rule.stated()) {
    server["cache_rule"] = {{"min_tokens", s_.server.cache_rule.min_tokens},
                            {"step", s_.server.cache_rule.step}};
  }
  return {server, {{"name", s_.server.model}}, {}};
}

std::unique_ptr<run::BlockServer> CompatServers::open(const plan::Block& block,
                                                      const std::filesystem::path&,
                                                      results::BlockInfo& info) {
  auto be = make_call_backend(s_.server, transport_, s_.server.url, api_key_, false, llama_server_,
                              tokenize_endpoint_);
  info.url = s_.server.url;
  info.other["described"] = be->describe();
  if (auto* openai = dynamic_cast<backend::OpenAiBackend*>(be.get());
      openai && !llama_server_ && !tokenize_endpoint_) {
    if (calibration_) {
      openai->set_calibration(*calibration_);
    } else {
      calibration_ = openai->calibrate(
          calibration_probes(run_id_, s_.seed, static_cast<std::size_t>(block.config.num_ctx) / 2));
    }
    info.other["calibration"] = calibration_->to_json();
  }
  return std::make_unique<CompatBlock>(std::move(be), transport_, backend::root_of(s_.server.url),
                                       api_headers(s_.server.kind, api_key_));
}

}  // namespace kvbench::servers
