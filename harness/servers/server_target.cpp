#include "harness/servers/server_target.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include <fmt/format.h>

#include "harness/backend/llama_server.h"
#include "harness/core/error.h"
#include "harness/gguf/ggml_types.h"
#include "harness/process/run_capture.h"
#include "harness/servers/memory_fit.h"
#include "harness/servers/model_files.h"

namespace kvbench::servers {

namespace fs = std::filesystem;
using nlohmann::json;

std::string api_key_from(const scenario::ServerSpec& s) {
  if (s.api_key_env.empty()) {
    return "";
  }
  const char* v = std::getenv(s.api_key_env.c_str());
  if (v == nullptr) {
    throw InputError(fmt::format("server.api_key_env names ${}, which is not set", s.api_key_env));
  }
  return v;
}

namespace {

// A block-quantized cache type needs head sizes that are a multiple of its block size, or
// llama-server refuses to start: say so before anything runs.
void check_cache_types_fit(const scenario::Scenario& s, const json& model) {
  if (!model.contains("shape")) {
    return;
  }
  const auto head_k = model["shape"].value("head_dim_k", 0U);
  const auto head_v = model["shape"].value("head_dim_v", 0U);
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < s.factors.cache_type.size(); ++i) {
    const auto halves = scenario::cache_halves(s.factors.cache_type[i]);
    const auto block_of = [](const std::string& name) -> std::uint32_t {
      const auto type = gguf::ggml_type_from_name(name);
      return type ? gguf::ggml_type_info(*type).block_size : 1;
    };
    if (!halves.split()) {
      const std::uint32_t block = block_of(halves.k);
      if (block > 1 && head_k > 0 && (head_k % block != 0 || head_v % block != 0)) {
        problems.push_back(fmt::format(
            "{}: factors.cache_type[{}]: '{}' stores blocks of {} numbers, which must divide the "
            "model's head size ({} for K, {} for V); choose another cache type or model",
            s.source, i, halves.k, block, head_k, head_v));
      }
      continue;
    }
    for (const auto& [half, name, head] :
         {std::tuple{'k', halves.k, head_k}, std::tuple{'v', halves.v, head_v}}) {
      const std::uint32_t block = block_of(name);
      if (block > 1 && head > 0 && head % block != 0) {
        problems.push_back(fmt::format(
            "{}: factors.cache_type_{}: '{}' stores blocks of {} numbers, which must divide the "
            "model's {} head size ({}); choose another cache type or model",
            s.source, half, name, block, half == 'k' ? "K" : "V", head));
        if (std::find(problems.begin(), problems.end() - 1, problems.back()) !=
            problems.end() - 1) {
          problems.pop_back();  // the same half of another pair
        }
      }
    }
  }
  if (!problems.empty()) {
    throw InputError(problems);
  }
}

// The model and its KV cache at every planned condition against the machine's memory; what it
// warns of is kept with the model for the report.
void check_memory(const scenario::Scenario& s, const scenario::ServerSpec& spec, json& model,
                  bool force) {
  if (!model.contains("shape") || !model.contains("file_bytes")) {
    return;
  }
  const auto fit = memory_fit(s, model["shape"].get<gguf::ModelShape>(),
                              model["file_bytes"].get<std::uint64_t>(), available_memory(),
                              gpu_budget(spec.gpu_layers));
  for (const auto& w : fit.warnings) {
    fmt::print(stderr, "warning: {}: {}\n", s.source, w);
  }
  if (!fit.warnings.empty()) {
    model["warnings"] = fit.warnings;
  }
  check_memory_fit(fit, s.source, force);
}

}  // namespace

ServerTarget prepare_llama_target(const scenario::Scenario& s, const scenario::ServerSpec& spec,
                                  const run::RunOptions& o, http::Transport& transport) {
  ServerTarget t;
  t.spec = spec;
  try {
    t.api_key = api_key_from(spec);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", s.source, e.what()));
  }
  t.server = {{"kind", scenario::to_string(spec.kind)},
              {"mode", spec.managed() ? "managed" : "attached"}};
  t.model = {{"name", spec.model}};
  if (spec.managed()) {
    try {
      t.binary = find_llama_server(spec.binary);
      const fs::path models = o.models_dir.empty() ? default_models_dir() : o.models_dir;
      t.model_path = resolve_model(spec.model, models);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", s.source, e.what()));
    }
    const auto version = process::run_capture({t.binary, "--version"}, std::chrono::seconds(30));
    t.server["binary"] = t.binary;
    t.server["version"] = version.stdout_text + version.stderr_text;
    t.model = describe_model_file(t.model_path);
    check_cache_types_fit(s, t.model);
    check_memory(s, spec, t.model, o.force);
    t.model["name"] = spec.model;
    return t;
  }
  t.server["url"] = spec.url;
  backend::LlamaServerBackend probe(transport, spec.url, t.api_key);
  if (!probe.healthy()) {
    throw Error(
        fmt::format("the server at {} is not reachable or not ready (GET /health did "
                    "not answer 200); start it or fix server.url",
                    spec.url));
  }
  return t;
}

std::vector<ServerTarget> prepare_llama_targets(const scenario::Scenario& s,
                                                const run::RunOptions& o,
                                                http::Transport& transport) {
  if (s.variants.empty()) {
    return {prepare_llama_target(s, s.server, o, transport)};
  }
  std::vector<ServerTarget> out;
  for (const auto& v : s.variants) {
    out.push_back(prepare_llama_target(s, v.server, o, transport));
    out.back().variant = v.name;
  }
  return out;
}

}  // namespace kvbench::servers
