#pragma once
// What an attached server is, asked rather than assumed: llama-server's GET /props, Ollama's GET
// /api/version, an OpenAI-compatible GET /v1/models, in that order, the first that answers as its
// kind deciding; a URL ending in /v1 is asked at its root. What the server says of itself
// (context, slots, model, version) is kept for run.json.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/http/transport.h"
#include "harness/scenario/scenario.h"

namespace kvbench::servers {

struct FoundServer {
  std::optional<scenario::ServerKind> kind;  // none: nothing answered as a kind kvbench knows
  std::string root;                          // the URL given, without a trailing /v1
  std::string answered;                      // the request that answered, e.g. "GET /props"
  nlohmann::json reports = nlohmann::json::object();  // what the server says of itself
  // Each request's path ("/props") and its answer, in order.
  std::vector<std::pair<std::string, std::string>> tried;
};

// Asks the server at `url` what it is (three GETs at most, 5 s each), sending `headers` (the API
// key) with each.
FoundServer find_server(http::Transport& transport, const std::string& url,
                        const std::vector<std::pair<std::string, std::string>>& headers);

// Whether a server found as `found` serves the API of `stated`: llama-server and Ollama only
// their own, while llama-server, Ollama and OpenAI-compatible servers all serve the OpenAI API
// (and the Anthropic one, where they have it: a call that fails is measured as a failure). Pure.
bool serves(scenario::ServerKind found, scenario::ServerKind stated);

// The URL the servers of a `kind` take at the server found from `given`: the root for
// llama-server's and Ollama's own APIs, the /v1 base for the OpenAI and Anthropic APIs. Pure.
std::string url_for(const FoundServer& found, scenario::ServerKind kind, const std::string& given);

// What was tried, for a message: "GET /props, /api/version and /v1/models at URL: <answer>"
// where every answer was the same, else each with its own. Pure.
std::string tried_text(const FoundServer& found);

// One sentence: what was found where, and which proof of reuse its API allows. Pure.
std::string describe_found(const FoundServer& found, scenario::ServerKind kind);

// For run.json's server.found: kind, answered, reports and the stated one-level factors, each
// marked confirmed where the server reported it, else unverified. Pure.
nlohmann::json found_json(const FoundServer& found, const scenario::Scenario& s);

}  // namespace kvbench::servers
