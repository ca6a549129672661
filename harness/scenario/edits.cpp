#include "harness/scenario/edits.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"
#include "harness/gguf/model_shape.h"

namespace kvbench::scenario {

using json = nlohmann::json;

namespace {

// "0.25" -> 0.25, "none" -> "none": what a file writes in factors.edit_position. Anything else
// stays a string and is refused by the parser with the field's own message.
json edit_position_value(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) {
      return v;
    }
  } catch (const std::exception&) {
  }
  return text;
}

// One step of a --set path: a key, and the indexes after it ("args[1]" -> "args", {1}).
struct Step {
  std::string key;
  std::vector<std::size_t> indexes;
};

[[noreturn]] void bad_set(const std::string& arg, const std::string& why) {
  throw InputError(fmt::format("--set '{}': {}", arg, why));
}

std::vector<Step> parse_path(const std::string& path, const std::string& arg) {
  std::vector<Step> steps;
  std::size_t i = 0;
  while (i <= path.size()) {
    Step s;
    while (i < path.size() && path[i] != '.' && path[i] != '[') {
      s.key += path[i++];
    }
    if (s.key.empty()) {
      bad_set(arg,
              "expected PATH=VALUE with PATH dotted keys like answers.prompts or "
              "server.args[0]");
    }
    while (i < path.size() && path[i] == '[') {
      const std::size_t close = path.find(']', i);
      const std::string digits =
          close == std::string::npos ? "" : path.substr(i + 1, close - i - 1);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
          digits.size() > 6) {
        bad_set(arg, "an index is written [N], a number from 0");
      }
      s.indexes.push_back(std::stoul(digits));
      i = close + 1;
    }
    steps.push_back(std::move(s));
    if (i == path.size()) {
      break;
    }
    if (path[i] != '.') {
      bad_set(arg, fmt::format("unexpected '{}' in the path", path[i]));
    }
    ++i;
  }
  return steps;
}

// The value at an index of an array on the path; an index one past the end appends.
json& at_index(json& array, std::size_t index, const std::string& arg) {
  if (array.is_null()) {
    array = json::array();
  }
  if (!array.is_array()) {
    bad_set(arg, "an index [N] into a field that is not an array");
  }
  if (index > array.size()) {
    bad_set(arg, fmt::format("index {} is past the end of an array of {}", index, array.size()));
  }
  if (index == array.size()) {
    array.push_back(nullptr);
  }
  return array[index];
}

void apply_set(json& doc, const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos) {
    bad_set(arg, "expected PATH=VALUE, like answers.prompts=8");
  }
  const std::string text = arg.substr(eq + 1);
  json value;
  try {
    value = json::parse(text);
  } catch (const json::exception&) {
    value = text;  // not JSON: the string as written
  }
  json* at = &doc;
  for (const auto& step : parse_path(arg.substr(0, eq), arg)) {
    if (at->is_null()) {
      *at = json::object();
    }
    if (!at->is_object()) {
      bad_set(arg, fmt::format("'{}' is inside a field that is not an object", step.key));
    }
    at = &(*at)[step.key];
    for (std::size_t index : step.indexes) {
      at = &at_index(*at, index, arg);
    }
  }
  *at = std::move(value);
}

// `doc[key]` as an object, created when missing (a type mismatch is left for the parser).
json& edited_object(json& doc, const char* key) {
  if (!doc.contains(key) || doc[key].is_null()) {
    doc[key] = json::object();
  }
  return doc[key];
}

// --cache-type sets both halves; --cache-type-k and --cache-type-v set one each, the other
// keeping the file's levels (its cache_type_k or _v, else its cache_type, else f16).
void edit_cache_types(json& factors, const ScenarioEdits& e) {
  if (!e.cache_type.empty() && (!e.cache_type_k.empty() || !e.cache_type_v.empty())) {
    throw InputError(
        "--cache-type sets both halves of the KV cache: give it, or --cache-type-k and "
        "--cache-type-v, not both");
  }
  if (!e.cache_type.empty()) {
    factors.erase("cache_type_k");
    factors.erase("cache_type_v");
    factors["cache_type"] = e.cache_type;
    return;
  }
  if (e.cache_type_k.empty() && e.cache_type_v.empty()) {
    return;
  }
  const json both = factors.contains("cache_type") ? factors["cache_type"] : json::array({"f16"});
  const auto half = [&](const char* key, const std::vector<std::string>& given) {
    if (!given.empty()) {
      factors[key] = given;
    } else if (!factors.contains(key)) {
      factors[key] = both;
    }
  };
  half("cache_type_k", e.cache_type_k);
  half("cache_type_v", e.cache_type_v);
  factors.erase("cache_type");
}

// The variants two models or more make, the first the baseline.
void add_model_variants(json& doc, const std::vector<std::string>& models) {
  if (doc.contains("variants") && !doc["variants"].is_null()) {
    throw InputError(fmt::format(
        "--model given {} times makes one variant per model, but the scenario has variants of "
        "its own: give one --model, or name the models in its variants",
        models.size()));
  }
  const auto names = model_variant_names(models);
  json variants = json::array();
  for (std::size_t i = 0; i < models.size(); ++i) {
    variants.push_back({{"name", names[i]}, {"server", {{"model", models[i]}}}});
  }
  edited_object(doc, "server")["model"] = models.front();
  doc["variants"] = std::move(variants);
}

}  // namespace

std::vector<std::string> model_variant_names(const std::vector<std::string>& models) {
  std::vector<std::string> out;
  for (const auto& m : models) {
    std::string name = m;
    if (const auto preset = gguf::synthetic_preset(name)) {
      name = *preset;
    } else {
      name =
          name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
      if (name.size() > 5 && name.ends_with(".gguf")) {
        name.resize(name.size() - 5);
      }
    }
    for (char& ch : name) {
      const auto u = static_cast<unsigned char>(ch);
      if (std::isalnum(u) == 0 && ch != '_' && ch != '.' && ch != '-') {
        ch = '-';
      }
    }
    name = name.empty() ? "model" : name;
    std::string unique = name;
    for (int n = 2; std::find(out.begin(), out.end(), unique) != out.end(); ++n) {
      unique = fmt::format("{}-{}", name, n);
    }
    out.push_back(unique);
  }
  return out;
}

bool ScenarioEdits::any() const {
  return !flags().empty();
}

std::vector<std::string> ScenarioEdits::flags() const {
  std::vector<std::string> out;
  const auto add = [&](bool given, const char* flag) {
    if (given) {
      out.emplace_back(flag);
    }
  };
  add(!prompt_tokens.empty(), "--prompt-tokens");
  add(!num_ctx.empty(), "--num-ctx");
  add(!cache_type.empty(), "--cache-type");
  add(!cache_type_k.empty(), "--cache-type-k");
  add(!cache_type_v.empty(), "--cache-type-v");
  add(!edit_position.empty(), "--edit-position");
  add(!batch_size.empty(), "--batch-size");
  add(!ubatch_size.empty(), "--ubatch-size");
  add(repeats.has_value(), "--repeats");
  add(block_repeats.has_value(), "--block-repeats");
  add(max_tokens.has_value(), "--max-tokens");
  add(seed.has_value(), "--seed");
  add(threads.has_value(), "--threads");
  add(gpu_layers.has_value(), "--gpu-layers");
  add(!flash_attn.empty(), "--flash-attn");
  add(!kind.empty(), "--kind");
  add(!name.empty(), "--name");
  add(models.size() > 1, "--model");
  for (const auto& s : sets) {
    out.push_back("--set " + s.substr(0, s.find('=')));
  }
  return out;
}

std::string ScenarioEdits::made_name() const {
  std::string out = "kvbench";
  if (!prompt_tokens.empty()) {
    out += fmt::format("-p{}", fmt::join(prompt_tokens, "-"));
  }
  if (!num_ctx.empty()) {
    out += fmt::format("-ctx{}", fmt::join(num_ctx, "-"));
  }
  if (!cache_type.empty()) {
    out += fmt::format("-{}", fmt::join(cache_type, "-"));
  }
  if (!cache_type_k.empty()) {
    out += fmt::format("-k{}", fmt::join(cache_type_k, "-"));
  }
  if (!cache_type_v.empty()) {
    out += fmt::format("-v{}", fmt::join(cache_type_v, "-"));
  }
  if (!edit_position.empty()) {
    out += fmt::format("-edit{}", fmt::join(edit_position, "-"));
  }
  if (!batch_size.empty()) {
    out += fmt::format("-b{}", fmt::join(batch_size, "-"));
  }
  if (!ubatch_size.empty()) {
    out += fmt::format("-ub{}", fmt::join(ubatch_size, "-"));
  }
  if (models.size() > 1) {
    out += fmt::format("-{}", fmt::join(model_variant_names(models), "-vs-"));
  }
  return out == "kvbench" ? "kvbench-flags" : out;
}

json apply_edits(json doc, const ScenarioEdits& e) {
  if (!doc.is_object()) {
    return doc;  // the parser names what it expected
  }
  json& factors = edited_object(doc, "factors");
  if (!e.prompt_tokens.empty()) {
    factors["prompt_tokens"] = e.prompt_tokens;
  }
  if (!e.num_ctx.empty()) {
    factors["num_ctx"] = e.num_ctx;
  }
  edit_cache_types(factors, e);
  // A flag's levels replace the file's: its factor, or its server field.
  for (const auto& [key, levels] :
       {std::pair{"batch_size", &e.batch_size}, std::pair{"ubatch_size", &e.ubatch_size}}) {
    if (!levels->empty()) {
      factors[key] = *levels;
      if (doc.contains("server") && doc["server"].is_object()) {
        doc["server"].erase(key);
      }
    }
  }
  if (!e.edit_position.empty()) {
    json positions = json::array();
    for (const auto& p : e.edit_position) {
      positions.push_back(edit_position_value(p));
    }
    factors["edit_position"] = positions;
  }
  const auto set_int = [&](const char* key, const auto& v) {
    if (v) {
      doc[key] = *v;
    }
  };
  set_int("repeats", e.repeats);
  set_int("block_repeats", e.block_repeats);
  set_int("max_tokens", e.max_tokens);
  set_int("seed", e.seed);
  if (e.threads || e.gpu_layers || !e.flash_attn.empty() || !e.kind.empty()) {
    json& server = edited_object(doc, "server");
    if (e.threads) {
      server["threads"] = *e.threads;
    }
    if (e.gpu_layers) {
      server["gpu_layers"] = *e.gpu_layers;
    }
    if (!e.flash_attn.empty()) {
      server["flash_attn"] = e.flash_attn;
    }
    if (!e.kind.empty()) {
      server["kind"] = e.kind;
    }
  }
  if (!e.name.empty()) {
    doc["name"] = e.name;
  }
  if (e.models.size() > 1) {
    add_model_variants(doc, e.models);
  }
  for (const auto& s : e.sets) {
    apply_set(doc, s);
  }
  return doc;
}

}  // namespace kvbench::scenario
