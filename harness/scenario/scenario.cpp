#include "harness/scenario/scenario.h"

#include <algorithm>
#include <optional>
#include <variant>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/ggml_types.h"
#include "harness/scenario/kinds.h"
#include "harness/scenario/parse_detail.h"
#include "harness/scenario/suggest.h"

namespace kvbench::scenario {

using nlohmann::json;

namespace {

using detail::Checker;

using detail::kMaxPromptTokens;

void parse_probes(Checker& c, const json& v, Probes& p) {
  if (!v.is_object()) {
    c.problem("probes", fmt::format("expected an object like {{\"every\": 5, \"prompt_tokens\": "
                                    "256}}, got {}",
                                    Checker::describe(v)));
    return;
  }
  c.keys(v, "probes", {"every", "prompt_tokens"});
  if (v.contains("every")) {
    p.every = c.integer(v["every"], "probes.every", 0, 10000).value_or(0);
  }
  if (v.contains("prompt_tokens")) {
    p.prompt_tokens =
        c.integer(v["prompt_tokens"], "probes.prompt_tokens", 1, kMaxPromptTokens).value_or(256);
    // A resolved scenario writes {"every": 0, "prompt_tokens": 256} for a run without probes, so
    // only a length other than the default contradicts every = 0.
    if (p.every == 0 && v.contains("every") && p.prompt_tokens != Probes{}.prompt_tokens) {
      c.problem("probes.every",
                fmt::format("0 means no probes, yet probes.prompt_tokens asks for probes of {} "
                            "tokens: give every >= 1 for probes, or remove \"probes\"",
                            p.prompt_tokens));
    }
  }
}

// How often and how long each call runs: repeats, block_repeats, seed, max_tokens, warmup,
// timeout_s.
void parse_run_settings(Checker& c, const json& doc, Scenario& s) {
  if (doc.contains("repeats")) {
    s.repeats = c.integer(doc["repeats"], "repeats", 1, 10000).value_or(s.repeats);
  }
  if (doc.contains("block_repeats")) {
    s.block_repeats = c.integer(doc["block_repeats"], "block_repeats", 1, 100).value_or(1);
  }
  if (doc.contains("seed")) {
    if (!doc["seed"].is_number_unsigned()) {
      c.problem("seed", fmt::format("expected a non-negative integer, got {}",
                                    Checker::describe(doc["seed"])));
    } else {
      s.seed = doc["seed"].get<std::uint64_t>();
    }
  }
  if (doc.contains("max_tokens")) {
    s.max_tokens = c.integer(doc["max_tokens"], "max_tokens", 2, 100000).value_or(s.max_tokens);
  }
  if (doc.contains("warmup")) {
    s.warmup = c.integer(doc["warmup"], "warmup", 0, 100).value_or(s.warmup);
  }
  if (doc.contains("timeout_s")) {
    const json& t = doc["timeout_s"];
    if (!t.is_number() || t.get<double>() <= 0 || t.get<double>() > 86400) {
      c.problem("timeout_s", fmt::format("expected a number of seconds in (0, 86400], got {}",
                                         Checker::describe(t)));
    } else {
      s.timeout_s = t.get<double>();
    }
  }
}

void parse_top(Checker& c, const json& doc, Scenario& s) {
  c.keys(
      doc, "",
      {"name", "description", "server", "factors", "repeats", "block_repeats", "seed", "max_tokens",
       "warmup", "timeout_s", "unique_first_line", "probes", "variants", "gate", "concurrency",
       "precision", "answers", "workload", std::string(detail::kEarlierWorkloadKey)});
  detail::parse_workload(c, doc, s);
  if (doc.contains("answers")) {
    detail::parse_answers(c, doc["answers"], s.answers);
  }
  if (doc.contains("precision")) {
    detail::parse_precision(c, doc["precision"], s.precision);
  }
  if (!doc.contains("name")) {
    c.problem("name", "missing: give the scenario a name");
  } else {
    s.name = c.string(doc["name"], "name", false).value_or("");
  }
  if (doc.contains("description")) {
    s.description = c.string(doc["description"], "description", true).value_or("");
  }
  if (doc.contains("server")) {
    detail::parse_server(c, doc["server"], "server", s.server);
  }
  if (doc.contains("variants")) {
    detail::parse_variants(c, doc["variants"], s);
  }
  if (doc.contains("gate")) {
    detail::parse_gate(c, doc["gate"], s);
  }
  if (doc.contains("factors")) {
    detail::parse_factors(c, doc["factors"], s.factors);
  }
  parse_run_settings(c, doc, s);
  if (doc.contains("probes")) {
    parse_probes(c, doc["probes"], s.probes);
  }
  if (doc.contains("concurrency")) {
    Problems problems;
    parse_concurrency(doc["concurrency"], s.concurrency, problems);
    for (const auto& [path, what] : problems) {
      c.problem(path, what);
    }
  }
  if (doc.contains("unique_first_line")) {
    if (!doc["unique_first_line"].is_boolean()) {
      c.problem("unique_first_line", fmt::format("expected true or false, got {}",
                                                 Checker::describe(doc["unique_first_line"])));
    } else {
      s.unique_first_line = doc["unique_first_line"].get<bool>();
    }
  }
}

// Concurrency runs many server slots at once; the pairs of the edit-position experiment need one
// slot to themselves. An attached llama-server has a fixed number of slots that stream k is
// pinned to; an attached Ollama takes any number of streams (those beyond its
// OLLAMA_NUM_PARALLEL wait in its queue, which is measured).
void check_concurrency(Checker& c, const Scenario& s) {
  if (!s.concurrency.active()) {
    return;
  }
  if (!s.factors.edit_position.empty()) {
    c.problem("concurrency",
              "the edit-position experiment reads each pair on one slot: run it without "
              "concurrency");
  }
  if (!s.server.managed() && !traits(s.server.kind).queues_streams &&
      s.concurrency.slot_levels().size() > 1) {
    c.problem("concurrency.streams",
              "an attached server (server.url) cannot change its slots (-np): give one level or "
              "use a managed server");
  }
}

// Cross-field rules, checked once every field parsed.
void check_consistency(Checker& c, Scenario& s) {
  if (s.factors.num_ctx.empty()) {
    s.factors.num_ctx = {4096};
  }
  if (s.factors.cache_type.empty()) {
    s.factors.cache_type = {"f16"};
  }
  const int min_ctx = *std::min_element(s.factors.num_ctx.begin(), s.factors.num_ctx.end());
  for (std::size_t i = 0; i < s.factors.prompt_tokens.size(); ++i) {
    const int p = s.factors.prompt_tokens[i];
    if (p + s.max_tokens > min_ctx) {
      c.problem(fmt::format("factors.prompt_tokens[{}]", i),
                fmt::format("{} tokens do not fit num_ctx {} with max_tokens {}", p, min_ctx,
                            s.max_tokens));
    }
  }
  if (s.probes.every > 0 && s.probes.prompt_tokens + s.max_tokens > min_ctx) {
    c.problem("probes.prompt_tokens",
              fmt::format("{} tokens do not fit num_ctx {} with max_tokens {}",
                          s.probes.prompt_tokens, min_ctx, s.max_tokens));
  }
  if (s.server.managed() && served_by_llama_server(s.server.kind)) {
    for (std::size_t i = 0; i < s.factors.cache_type.size(); ++i) {
      const auto t = cache_halves(s.factors.cache_type[i]).v;
      if (gguf::quantized_cache_type(t) && s.server.flash_attn == "off") {
        c.problem(s.factors.cache_type_v.empty() ? fmt::format("factors.cache_type[{}]", i)
                                                 : std::string("factors.cache_type_v"),
                  fmt::format("a quantized V cache ('{}') needs flash attention, but "
                              "server.flash_attn is 'off'",
                              t));
      }
    }
  }
  if (s.server.kind == ServerKind::ollama) {
    for (const auto& level : s.factors.cache_type) {
      if (cache_halves(level).split()) {
        c.problem("factors.cache_type_k",
                  fmt::format("Ollama sets one cache type for K and V (OLLAMA_KV_CACHE_TYPE): "
                              "the pair {} ({} keys, {} values) cannot be asked of it",
                              level, cache_halves(level).k, cache_halves(level).v));
        break;
      }
    }
  }
  if (!s.factors.edit_position.empty() && !s.unique_first_line) {
    c.problem("factors.edit_position",
              "the cold read of each pair needs a unique first line: remove "
              "'unique_first_line': false");
  }
  if (const auto why = model_problem(s.server)) {
    c.problem("server.model", *why);
  }
  check_concurrency(c, s);
  detail::check_batch(c, s);
  detail::check_precision(c, s);
  detail::check_answers(c, s);
  detail::check_workload(c, s);
  if (!s.server.managed()) {
    // Ollama takes num_ctx per request (a change reloads the model); llama-server needs a restart.
    if (s.factors.num_ctx.size() > 1 && !traits(s.server.kind).ctx_per_request) {
      c.problem("factors.num_ctx",
                "an attached server (server.url) cannot vary num_ctx: it "
                "needs a restart; give one value or use a managed server");
    }
    if (s.factors.cache_type.size() > 1) {
      c.problem("factors.cache_type",
                "an attached server (server.url) cannot vary cache_type: "
                "it needs a restart; give one value or use a managed server");
    }
  }
}

}  // namespace

json parse_scenario_json(std::string_view text, const std::string& source) {
  try {
    return json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw InputError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
}

Scenario parse_scenario(std::string_view text, const std::string& source) {
  return parse_scenario(parse_scenario_json(text, source), text, source);
}

Scenario parse_scenario(const json& doc, std::string_view text, const std::string& source) {
  Checker c(source, text);
  if (!doc.is_object()) {
    c.problem("", fmt::format("expected a JSON object, got {}", Checker::describe(doc)));
    c.throw_if_any();
  }
  // A key given twice would silently keep its last value.
  for (const auto& d : duplicate_keys(text)) {
    c.problem(d.path, fmt::format("given twice, on line {} and line {}: keep one", d.first_line,
                                  d.second_line));
  }
  Scenario s;
  s.source = source;
  parse_top(c, doc, s);
  const bool parsed = c.ok();
  detail::check_composition(c, doc, s);
  if (parsed) {
    check_consistency(c, s);
    detail::check_variants_and_gate(c, s, doc.contains("gate"));
  }
  c.throw_if_any();
  s.resolved = to_json(s);
  return s;
}

Scenario recorded_scenario(const json& resolved) {
  Scenario s;
  if (resolved.is_object()) {
    Checker c("run.json", "");
    c.skip_files();
    parse_top(c, resolved, s);
  }
  return s;
}

json to_json(const Scenario& s) {
  const json server = detail::server_to_json(s.server);
  json factors = {{"prompt_tokens", s.factors.prompt_tokens},
                  {"num_ctx", s.factors.num_ctx},
                  {"cache_type", s.factors.cache_type}};
  if (!s.factors.cache_type_k.empty()) {
    factors.erase("cache_type");
    factors["cache_type_k"] = s.factors.cache_type_k;
    factors["cache_type_v"] = s.factors.cache_type_v;
  }
  if (s.factors.prompt_tokens.empty()) {
    factors.erase("prompt_tokens");  // a conversation sizes its prompts by its turns
  }
  if (!s.factors.batch_size.empty()) {
    factors["batch_size"] = s.factors.batch_size;
  }
  if (!s.factors.ubatch_size.empty()) {
    factors["ubatch_size"] = s.factors.ubatch_size;
  }
  if (!s.factors.edit_position.empty()) {
    factors["edit_position"] = json::array();
    for (const auto& e : s.factors.edit_position) {
      factors["edit_position"].push_back(e.to_json());
    }
  }
  json out = {{"name", s.name},
              {"description", s.description},
              {"server", server},
              {"factors", factors},
              {"repeats", s.repeats},
              {"block_repeats", s.block_repeats},
              {"seed", s.seed},
              {"max_tokens", s.max_tokens},
              {"warmup", s.warmup},
              {"timeout_s", s.timeout_s},
              {"unique_first_line", s.unique_first_line},
              {"probes", {{"every", s.probes.every}, {"prompt_tokens", s.probes.prompt_tokens}}}};
  detail::add_variants_and_gate(s, out);
  if (s.answers.active()) {
    out["answers"] = {{"prompts", s.answers.prompts},
                      {"file", s.answers.file},
                      {"prompt_tokens", s.answers.prompt_tokens},
                      {"tokens", s.answers.tokens},
                      {"top_k", s.answers.top_k},
                      {"reference", s.answers.reference}};
    if (const auto h = cache_halves(s.answers.reference); h.split()) {
      out["answers"]["reference"] = {{"k", h.k}, {"v", h.v}};
    }
  }
  if (s.precision.active()) {
    out["precision"] = {{"metric", s.precision.metric},
                        {"effect", s.precision.effect},
                        {"half_width", s.precision.half_width},
                        {"max_calls", s.precision.max_calls}};
  }
  detail::add_workload_json(s, out);
  if (s.concurrency.active()) {
    out["concurrency"] = to_json(s.concurrency);
  }
  return out;
}

}  // namespace kvbench::scenario
