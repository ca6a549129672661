// The "variants" and "gate" sections of a scenario (an A/B comparison of server variants and the
// performance gate that judges it).

#include <algorithm>
#include <set>

#include "harness/gguf/ggml_types.h"
#include "harness/scenario/kinds.h"
#include "harness/scenario/parse_detail.h"

namespace kvbench::scenario::detail {

namespace {

// The metric keys of the analysis (harness/analysis), which the gate can judge.
const std::vector<std::string>& gate_metric_keys() {
  static const std::vector<std::string> kKeys = {"ttft_ms", "server_prompt_ms", "decode_tps",
                                                 "server_decode_tps"};
  return kKeys;
}

const std::vector<std::string>& where_keys() {
  static const std::vector<std::string> kKeys = {"num_ctx", "cache_type", "prompt_tokens"};
  return kKeys;
}

bool valid_variant_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '-';
  });
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  const std::string near = nearest(word, known);
  return near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near);
}

// One variant's server: the scenario's server with the fields of `v` replaced.
ServerSpec variant_server(Checker& c, const json& v, const std::string& path,
                          const ServerSpec& base) {
  ServerSpec spec = base;
  parse_server(c, v, path, spec);
  if (!v.is_object()) {
    return spec;
  }
  if (v.contains("kind") && spec.kind != base.kind) {
    c.problem(path + ".kind", fmt::format("every variant runs on the scenario's server kind '{}'",
                                          to_string(base.kind)));
  }
  if (v.contains("url")) {  // attached: what only a managed server uses does not carry over
    spec.binary.clear();
    spec.args.clear();
    spec.threads = 0;
  } else if (!base.url.empty() &&
             (v.contains("binary") || v.contains("args") || v.contains("threads"))) {
    c.problem(path,
              "this variant attaches to server.url: 'binary', 'args' and 'threads' apply "
              "only to a managed server");
  }
  return spec;
}

void parse_variant(Checker& c, const json& v, const std::string& path, Scenario& s) {
  if (!v.is_object()) {
    c.problem(path, fmt::format("expected an object like {{\"name\": \"candidate\", \"server\": "
                                "{{...}}}}, got {}",
                                Checker::describe(v)));
    return;
  }
  c.keys(v, path, {"name", "server"});
  Variant var;
  if (!v.contains("name")) {
    c.problem(path + ".name", "missing: give the variant a name");
  } else if (auto name = c.string(v["name"], path + ".name", false)) {
    if (!valid_variant_name(*name)) {
      c.problem(path + ".name",
                fmt::format("'{}': use only letters, digits, '_', '.' and '-'", *name));
    } else if (std::any_of(s.variants.begin(), s.variants.end(),
                           [&](const Variant& o) { return o.name == *name; })) {
      c.problem(path + ".name", fmt::format("duplicate variant name '{}'", *name));
    }
    var.name = *name;
  }
  var.server =
      v.contains("server") ? variant_server(c, v["server"], path + ".server", s.server) : s.server;
  s.variants.push_back(std::move(var));
}

void parse_gate_metric(Checker& c, const json& v, const std::string& path, GatedMetric& m) {
  if (!v.is_object()) {
    c.problem(path, fmt::format("expected an object like {{\"metric\": \"decode_tps\", "
                                "\"margin\": 0.05}}, got {}",
                                Checker::describe(v)));
    return;
  }
  c.keys(v, path, {"metric", "margin", "where"});
  if (!v.contains("metric")) {
    c.problem(path + ".metric", "missing: name the metric to gate");
  } else if (auto key = c.string(v["metric"], path + ".metric", false)) {
    const auto& known = gate_metric_keys();
    if (std::find(known.begin(), known.end(), *key) == known.end()) {
      c.problem(path + ".metric", fmt::format("unknown metric '{}'{}: expected one of {}", *key,
                                              did_you_mean(*key, known), fmt::join(known, ", ")));
    }
    m.metric = *key;
  }
  if (!v.contains("margin")) {
    c.problem(path + ".margin", "missing: give the tolerated relative change, e.g. 0.05 for 5 %");
  } else if (!v["margin"].is_number() || v["margin"].get<double>() <= 0 ||
             v["margin"].get<double>() >= 1) {
    c.problem(path + ".margin", fmt::format("expected a fraction in (0, 1), e.g. 0.05 for 5 %, "
                                            "got {}",
                                            Checker::describe(v["margin"])));
  } else {
    m.margin = v["margin"].get<double>();
  }
  if (!v.contains("where")) {
    return;
  }
  const json& w = v["where"];
  if (!w.is_object()) {
    c.problem(path + ".where", fmt::format("expected an object like {{\"cache_type\": \"q8_0\"}}, "
                                           "got {}",
                                           Checker::describe(w)));
    return;
  }
  c.keys(w, path + ".where", where_keys());
  for (const auto& [key, level] : w.items()) {
    if (level.is_string()) {
      m.where[key] = level.get<std::string>();
    } else if (level.is_number_integer()) {
      m.where[key] = level.dump();
    } else {
      c.problem(fmt::format("{}.where.{}", path, key),
                fmt::format("expected a factor level, got {}", Checker::describe(level)));
    }
  }
}

void parse_gate_metrics(Checker& c, const json& v, GateConfig& g) {
  if (!v.is_array() || v.empty()) {
    c.problem("gate.metrics", "expected a non-empty array of {\"metric\": ..., \"margin\": ...}");
    return;
  }
  g.metrics.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    GatedMetric m;
    parse_gate_metric(c, v[i], fmt::format("gate.metrics[{}]", i), m);
    g.metrics.push_back(std::move(m));
  }
}

// The levels of the factor `key` as text.
std::vector<std::string> levels_of(const Factors& f, const std::string& key) {
  std::vector<std::string> out;
  if (key == "cache_type") {
    return f.cache_type;
  }
  for (int x : key == "num_ctx" ? f.num_ctx : f.prompt_tokens) {
    out.push_back(std::to_string(x));
  }
  return out;
}

void check_variant_servers(Checker& c, const Scenario& s) {
  for (std::size_t i = 0; i < s.variants.size(); ++i) {
    const ServerSpec& spec = s.variants[i].server;
    const std::string path = fmt::format("variants[{}].server", i);
    if (spec.managed() ? !served_by_llama_server(spec.kind) : !traits(spec.kind).native_llama_api) {
      c.problem("variants",
                "server variants run on a managed llama-server (any kind but Ollama) or an "
                "attached llama-server only for now");
      return;
    }
    const bool quantized = std::any_of(
        s.factors.cache_type.begin(), s.factors.cache_type.end(),
        [](const std::string& level) { return gguf::quantized_cache_type(cache_halves(level).v); });
    if (spec.managed() && quantized && spec.flash_attn == "off") {
      c.problem(path + ".flash_attn",
                "a quantized V cache needs flash attention, but this variant turns it 'off'");
    }
    if (!spec.managed() && (s.factors.num_ctx.size() > 1 || s.factors.cache_type.size() > 1)) {
      c.problem(path + ".url",
                "an attached variant cannot vary num_ctx or cache_type: they need "
                "a restart; give one value of each or use a managed server");
    }
  }
}

void check_gate(Checker& c, Scenario& s) {
  std::vector<std::string> names;
  for (const auto& v : s.variants) {
    names.push_back(v.name);
  }
  if (!s.gate.baseline.empty() &&
      std::find(names.begin(), names.end(), s.gate.baseline) == names.end()) {
    c.problem("gate.baseline",
              names.empty()
                  ? std::string("names a variant, but the scenario has no variants")
                  : fmt::format("'{}' is no variant{}: expected one of {}", s.gate.baseline,
                                did_you_mean(s.gate.baseline, names), fmt::join(names, ", ")));
  }
  if (s.gate.baseline.empty() && !names.empty()) {
    s.gate.baseline = names.front();
  }
  for (std::size_t i = 0; i < s.gate.metrics.size(); ++i) {
    for (const auto& [key, level] : s.gate.metrics[i].where) {
      const auto& keys = where_keys();
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        continue;  // reported as an unknown key
      }
      const auto levels = levels_of(s.factors, key);
      if (std::find(levels.begin(), levels.end(), level) == levels.end()) {
        c.problem(fmt::format("gate.metrics[{}].where.{}", i, key),
                  fmt::format("'{}' is not a level of factors.{}{}: expected one of {}", level, key,
                              did_you_mean(level, levels), fmt::join(levels, ", ")));
      }
    }
  }
}

json gate_to_json(const GateConfig& g) {
  json metrics = json::array();
  for (const auto& m : g.metrics) {
    json jm = {{"metric", m.metric}, {"margin", m.margin}};
    if (!m.where.empty()) {
      jm["where"] = m.where;
    }
    metrics.push_back(jm);
  }
  json out = {{"alpha", g.alpha},
              {"max_sets", g.max_sets},
              {"on_inconclusive", g.inconclusive_fails ? "fail" : "warn"},
              {"max_cv", g.max_cv},
              {"metrics", metrics}};
  if (!g.baseline.empty()) {
    out["baseline"] = g.baseline;
  }
  return out;
}

}  // namespace

void parse_variants(Checker& c, const json& v, Scenario& s) {
  if (!v.is_array()) {
    c.problem("variants", fmt::format("expected an array of variants like {{\"name\": "
                                      "\"baseline\"}}, got {}",
                                      Checker::describe(v)));
    return;
  }
  if (v.size() < 2) {
    c.problem("variants", "expected at least two variants to compare");
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    parse_variant(c, v[i], fmt::format("variants[{}]", i), s);
  }
}

void parse_gate(Checker& c, const json& v, Scenario& s) {
  if (!v.is_object()) {
    c.problem("gate", fmt::format("expected an object, got {}", Checker::describe(v)));
    return;
  }
  GateConfig& g = s.gate;
  c.keys(v, "gate", {"alpha", "max_sets", "on_inconclusive", "baseline", "metrics", "max_cv"});
  if (v.contains("max_cv")) {
    if (!v["max_cv"].is_number() || v["max_cv"].get<double>() <= 0 ||
        v["max_cv"].get<double>() >= 1) {
      c.problem("gate.max_cv", fmt::format("expected a fraction in (0, 1), e.g. 0.05, got {}",
                                           Checker::describe(v["max_cv"])));
    } else {
      g.max_cv = v["max_cv"].get<double>();
    }
  }
  if (v.contains("alpha")) {
    if (!v["alpha"].is_number() || v["alpha"].get<double>() <= 0 ||
        v["alpha"].get<double>() >= 0.5) {
      c.problem("gate.alpha", fmt::format("expected a level in (0, 0.5), e.g. 0.05, got {}",
                                          Checker::describe(v["alpha"])));
    } else {
      g.alpha = v["alpha"].get<double>();
    }
  }
  if (v.contains("max_sets")) {
    g.max_sets = c.integer(v["max_sets"], "gate.max_sets", 1, 100).value_or(g.max_sets);
  }
  if (v.contains("on_inconclusive")) {
    if (auto o = c.string(v["on_inconclusive"], "gate.on_inconclusive", false)) {
      if (*o != "fail" && *o != "warn") {
        c.problem("gate.on_inconclusive", fmt::format("'{}'{}: expected 'fail' or 'warn'", *o,
                                                      did_you_mean(*o, {"fail", "warn"})));
      }
      g.inconclusive_fails = *o != "warn";
    }
  }
  if (v.contains("baseline")) {
    g.baseline = c.string(v["baseline"], "gate.baseline", false).value_or("");
  }
  if (v.contains("metrics")) {
    parse_gate_metrics(c, v["metrics"], g);
  }
}

void check_variants_and_gate(Checker& c, Scenario& s, bool gate_given) {
  check_variant_servers(c, s);
  if (gate_given || !s.variants.empty()) {
    check_gate(c, s);
  }
}

void add_variants_and_gate(const Scenario& s, json& resolved) {
  if (!s.variants.empty()) {
    json vs = json::array();
    for (const auto& v : s.variants) {
      vs.push_back({{"name", v.name}, {"server", server_to_json(v.server)}});
    }
    resolved["variants"] = vs;
  }
  const json gate = gate_to_json(s.gate);
  if (!s.variants.empty() || gate != gate_to_json(GateConfig{})) {
    resolved["gate"] = gate;
  }
}

}  // namespace kvbench::scenario::detail
