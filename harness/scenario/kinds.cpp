#include "harness/scenario/kinds.h"

#include <fmt/format.h>

#include "harness/gguf/model_shape.h"

namespace kvbench::scenario {

namespace {

using Named = KindTraits::NamedModel;

}  // namespace

const std::vector<KindTraits>& kinds() {
  // kind, name, served by llama-server, named model and where names are found, native API,
  // num_ctx per request, queues streams, endpoint, cache breakpoint
  static const std::vector<KindTraits> kKinds = {
      {ServerKind::llama_server, "llama-server", true, Named::never, "", true, false, false, false,
       false},
      {ServerKind::ollama, "ollama", false, Named::always,
       "e.g. llama3.2:1b, as `ollama list` shows", false, true, true, false, false},
      {ServerKind::openai, "openai", true, Named::attached, "as its /v1/models lists", false, false,
       false, true, false},
      {ServerKind::anthropic, "anthropic", true, Named::attached, "as its /v1/models lists", false,
       false, false, false, true},
  };
  return kKinds;
}

const KindTraits& traits(ServerKind kind) {
  for (const auto& k : kinds()) {
    if (k.kind == kind) {
      return k;
    }
  }
  return kinds().front();  // unreachable: every kind is in the table
}

std::optional<ServerKind> kind_named(std::string_view name) {
  for (const auto& k : kinds()) {
    if (k.name == name) {
      return k.kind;
    }
  }
  return std::nullopt;
}

std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (const auto& k : kinds()) {
    out.emplace_back(k.name);
  }
  return out;
}

std::string kind_list() {
  const auto names = kind_names();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

std::string_view to_string(ServerKind kind) {
  return traits(kind).name;
}

bool served_by_llama_server(ServerKind kind) {
  return traits(kind).served_by_llama_server;
}

std::optional<std::string> model_problem(const ServerSpec& spec) {
  const auto& t = traits(spec.kind);
  const bool named =
      t.named_model == Named::always || (t.named_model == Named::attached && !spec.managed());
  if (!named || !gguf::synthetic_preset(spec.model)) {
    return std::nullopt;
  }
  return fmt::format(
      "{} '{}' server runs the model each request names: give the name of one it "
      "has ({}), not '{}'",
      spec.managed() ? "a managed" : "an attached", t.name, t.model_hint, spec.model);
}

}  // namespace kvbench::scenario
