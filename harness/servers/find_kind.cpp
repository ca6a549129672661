#include "harness/servers/find_kind.h"

#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/backend/openai.h"
#include "harness/core/url.h"

namespace kvbench::servers {

using nlohmann::json;
using scenario::ServerKind;

namespace {

// The JSON object a GET answered with, or why there is none (for the list of what was tried).
std::pair<json, std::string> get_object(http::Transport& transport, const std::string& url,
                                        const std::vector<std::pair<std::string, std::string>>& h) {
  http::Request req;
  req.method = "GET";
  req.url = url;
  req.timeout = std::chrono::milliseconds(5000);
  req.headers = h;
  const auto res = transport.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    return {json(), res.http_status > 0 ? fmt::format("HTTP {}", res.http_status)
                                        : (res.error.empty() ? "no answer" : res.error)};
  }
  json j = json::parse(res.body, nullptr, false);
  if (!j.is_object()) {
    return {json(), "HTTP 200, but no JSON object"};
  }
  return {std::move(j), ""};
}

// Copies the fields of `from` that are present into `to`.
void keep(json& to, const json& from, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (from.contains(k) && !from[k].is_null()) {
      to[k] = from[k];
    }
  }
}

}  // namespace

FoundServer find_server(http::Transport& transport, const std::string& url,
                        const std::vector<std::pair<std::string, std::string>>& headers) {
  FoundServer f;
  f.root = backend::root_of(url);
  const auto note = [&](const std::string& path, const std::string& answer) {
    f.tried.emplace_back(path, answer);
  };
  if (auto [props, why] = get_object(transport, f.root + "/props", headers); why.empty()) {
    if (props.contains("default_generation_settings")) {
      f.kind = ServerKind::llama_server;
      f.answered = "GET /props";
      const json& g = props["default_generation_settings"];
      if (g.is_object() && g.contains("n_ctx")) {
        f.reports["n_ctx"] = g["n_ctx"];
      }
      keep(f.reports, props, {"total_slots", "model_path", "build_info"});
      return f;
    }
    note("/props", "answered, but without llama-server's default_generation_settings");
  } else {
    note("/props", why);
  }
  if (auto [version, why] = get_object(transport, f.root + "/api/version", headers);
      why.empty() && version.contains("version") && version["version"].is_string()) {
    f.kind = ServerKind::ollama;
    f.answered = "GET /api/version";
    f.reports["version"] = version["version"];
    return f;
  } else {
    note("/api/version", why.empty() ? "answered, but without a version" : why);
  }
  if (auto [models, why] = get_object(transport, f.root + "/v1/models", headers);
      why.empty() && models.contains("data") && models["data"].is_array()) {
    f.kind = ServerKind::openai;
    f.answered = "GET /v1/models";
    json ids = json::array();
    for (const auto& m : models["data"]) {
      if (m.is_object() && m.contains("id") && ids.size() < 8) {
        ids.push_back(m["id"]);
        // vLLM states each model's context.
        if (ids.size() == 1 && m.contains("max_model_len")) {
          f.reports["max_model_len"] = m["max_model_len"];
        }
      }
    }
    f.reports["models"] = ids;
    return f;
  } else {
    note("/v1/models", why.empty() ? "answered, but without a list of models (data)" : why);
  }
  return f;
}

// An answer without the time libcurl says a failed connection took ("... after 1 ms: ..."), so
// that the same failure on each path reads as one.
std::string without_elapsed(const std::string& answer) {
  static const std::regex kElapsed(" after [0-9]+ ms");
  return std::regex_replace(answer, kElapsed, "");
}

std::string tried_text(const FoundServer& found) {
  std::vector<std::string> paths;
  std::vector<std::string> each;
  bool same = true;
  const std::string first = without_elapsed(found.tried.empty() ? "" : found.tried.front().second);
  for (const auto& [path, answer] : found.tried) {
    paths.push_back(path);
    each.push_back(fmt::format("GET {}: {}", path, answer));
    same = same && without_elapsed(answer) == first;
  }
  const std::string where = url_for_display(found.root);
  if (found.tried.empty()) {
    return where;
  }
  if (!same) {
    return fmt::format("at {}: {}", where, fmt::join(each, "; "));
  }
  const std::string last = paths.back();
  paths.pop_back();
  return fmt::format("GET {}{}{} at {}: {}", fmt::join(paths, ", "), paths.empty() ? "" : " and ",
                     last, where, first);
}

bool serves(ServerKind found, ServerKind stated) {
  switch (stated) {
    case ServerKind::llama_server:
    case ServerKind::ollama:
      return found == stated;
    case ServerKind::openai:
    case ServerKind::anthropic:
      return true;
  }
  return false;
}

std::string url_for(const FoundServer& found, ServerKind kind, const std::string& given) {
  if (kind == ServerKind::llama_server || kind == ServerKind::ollama) {
    return found.root;
  }
  std::string base = given;
  while (!base.empty() && base.back() == '/') {
    base.pop_back();
  }
  if (base.ends_with("/v1") || !found.kind) {
    return base;
  }
  return found.root + "/v1";
}

std::string describe_found(const FoundServer& found, ServerKind kind) {
  if (!found.kind) {
    return "";
  }
  const std::string where = url_for_display(found.root);
  std::string what;
  switch (*found.kind) {
    case ServerKind::llama_server:
      what = fmt::format("llama-server at {} ({} answered{})", where, found.answered,
                         found.reports.contains("build_info")
                             ? ", build " + found.reports["build_info"].get<std::string>()
                             : "");
      break;
    case ServerKind::ollama:
      what = fmt::format("Ollama {} at {} ({} answered)", found.reports.value("version", "?"),
                         where, found.answered);
      break;
    default:
      what =
          fmt::format("an OpenAI-compatible server at {}/v1 ({} answered)", where, found.answered);
      break;
  }
  std::string proof;
  if (kind == ServerKind::llama_server) {
    proof = "its own API reports the tokens each call reused (cache_n), so every call is proved";
  } else if (kind == ServerKind::ollama) {
    proof =
        "Ollama reports the prompt tokens it evaluated (prompt_eval_count), from which each "
        "call's reuse is read";
  } else if (*found.kind == ServerKind::llama_server) {
    proof = fmt::format(
        "measured through the {} API, where llama-server reports each call's cached tokens, so "
        "every call is proved",
        scenario::to_string(kind));
  } else {
    proof = fmt::format(
        "measured through the {} API: a call is proved where the server reports its cached "
        "tokens (cached_tokens, cache_read_input_tokens), and stays unproved where it does not",
        scenario::to_string(kind));
  }
  return fmt::format("found {}: {}", what, proof);
}

json found_json(const FoundServer& found, const scenario::Scenario& s) {
  json j = {{"kind", found.kind ? json(scenario::to_string(*found.kind)) : json()},
            {"answered", found.answered},
            {"reports", found.reports}};
  // A factor only a restart changes has one level at an attached server: as the user stated it,
  // confirmed where the server reports it.
  json stated = json::object();
  if (s.factors.num_ctx.size() == 1) {
    const int ctx = s.factors.num_ctx.front();
    json c = {{"value", ctx}, {"check", "unverified"}};
    if (found.reports.contains("n_ctx") && found.reports["n_ctx"].is_number_integer()) {
      c["check"] = found.reports["n_ctx"].get<int>() == ctx ? "confirmed" : "differs";
      c["server"] = found.reports["n_ctx"];
    }
    stated["num_ctx"] = c;
  }
  if (s.factors.cache_type.size() == 1) {
    stated["cache_type"] = {{"value", s.factors.cache_type.front()}, {"check", "unverified"}};
  }
  j["stated"] = stated;
  return j;
}

}  // namespace kvbench::servers
