#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"
#include "harness/core/url.h"
#include "harness/run/runner.h"
#include "harness/run/workloads.h"
#include "harness/scenario/kinds.h"

namespace kvbench::run {

namespace {

// What the parser refuses for a server.url, refused for a --url given after it: a factor only a
// restart changes, with more than one level.
void check_attached_factors(const scenario::Scenario& s) {
  const auto refuse = [&](const char* field, const auto& levels) {
    throw InputError(fmt::format(
        "{}: --url: an attached server cannot vary {} ({}): it needs a restart; give one level "
        "or let kvbench manage the server (no --url)",
        s.source, field, fmt::join(levels, ", ")));
  };
  if (s.factors.num_ctx.size() > 1 && !scenario::traits(s.server.kind).ctx_per_request) {
    refuse("factors.num_ctx", s.factors.num_ctx);
  }
  if (s.factors.cache_type.size() > 1) {
    refuse("factors.cache_type", s.factors.cache_type);
  }
  if (s.server.gpu_layers >= 0 && s.server.kind != scenario::ServerKind::ollama) {
    throw InputError(fmt::format(
        "{}: --url: server.gpu_layers (--gpu-layers) is set when a server starts: an attached "
        "server placed its layers then; start it with its own -ngl, or let kvbench manage it",
        s.source));
  }
}

}  // namespace

void check_url_option(const std::string& url) {
  if (url_has_credentials(url)) {
    throw InputError(
        "--url: a URL with credentials in it (user:password@) is refused: put the key in an "
        "environment variable and name it with server.api_key_env");
  }
  if (!url.empty() && url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    throw InputError(
        fmt::format("--url: '{}' is not an http:// or https:// URL", url_for_display(url)));
  }
}

scenario::Scenario with_overrides(scenario::Scenario s, const RunOptions& o, bool check_model) {
  check_url_option(o.url);
  // A variant takes an override for a field it does not set itself (one equal to the server's).
  for (auto& v : s.variants) {
    if (!o.url.empty() && v.server.url == s.server.url) {
      v.server.url = o.url;
    }
    if (!o.model.empty() && v.server.model == s.server.model) {
      v.server.model = o.model;
    }
    if (!o.server_binary.empty() && v.server.binary == s.server.binary) {
      v.server.binary = o.server_binary;
    }
  }
  if (!o.url.empty()) {
    s.server.url = o.url;
    check_attached_factors(s);
  }
  if (!o.model.empty()) {
    s.server.model = o.model;
  }
  if (!o.server_binary.empty()) {
    s.server.binary = o.server_binary;
  }
  // The overrides may have made the server one that needs a model by name (--url).
  if (const auto why = check_model ? scenario::model_problem(s.server) : std::nullopt) {
    throw InputError(
        fmt::format("{}: server.model{}: {}", s.source, o.model.empty() ? "" : " (--model)", *why));
  }
  if (!o.trace_shard.empty()) {
    int index = -1;
    int count = 0;
    char slash = 0;
    std::istringstream in(o.trace_shard);
    if (!sharded(s)) {
      throw InputError(fmt::format("--trace-shard: {}: its workload is no trace", s.source));
    }
    if (!(in >> index >> slash >> count) || slash != '/' || !in.eof()) {
      throw InputError(fmt::format("--trace-shard '{}': expected K/N, like 0/2", o.trace_shard));
    }
    shard(s, index, count);
  }
  s.resolved = scenario::to_json(s);
  return s;
}

}  // namespace kvbench::run
