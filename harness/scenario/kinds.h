#pragma once
// The table of server kinds: each kind's name and what it requires and accepts, read by the
// scenario's validation, the commands and the sessions, so no kind is named anywhere else.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario/scenario.h"

namespace kvbench::scenario {

struct KindTraits {
  ServerKind kind;
  std::string_view name;
  // A managed llama-server serves it (through the kind's own API); otherwise the kind's own
  // server is started or attached to.
  bool served_by_llama_server;
  // When server.model must name a model the server has (no synthetic one): never (llama-server
  // serves the one it loaded), attached only (the OpenAI and Anthropic APIs ask for a model by
  // name), or always (Ollama loads the model each request names).
  enum class NamedModel { never, attached, always } named_model;
  std::string_view model_hint;  // where its names are found
  // It speaks llama-server's own API (/completion, /slots, /props) when attached.
  bool native_llama_api;
  // An attached server takes num_ctx per request (a change reloads the model), so num_ctx may vary
  // without a restart.
  bool ctx_per_request;
  // An attached server takes any number of streams, queuing those beyond its own parallelism
  // (which is measured), and picks its own slots.
  bool queues_streams;
  bool has_endpoint;          // server.endpoint: "chat" or "completions"
  bool has_cache_breakpoint;  // server.cache_breakpoint: "end" or "none"
};

// Every kind, in the order messages list them.
const std::vector<KindTraits>& kinds();
const KindTraits& traits(ServerKind kind);
std::optional<ServerKind> kind_named(std::string_view name);
// "'llama-server', 'ollama', 'openai' or 'anthropic'" for messages; kind_names() for option
// checks.
std::string kind_list();
std::vector<std::string> kind_names();

// What is wrong with `spec`'s model for its kind (a synthetic model where the server needs the
// name of one it has), or nothing.
std::optional<std::string> model_problem(const ServerSpec& spec);

}  // namespace kvbench::scenario
