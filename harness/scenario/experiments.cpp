// The experiments a scenario may add to its sweep: "precision" (more sets until a headline effect
// is precise enough) and "answers" (greedy answers compared between cache types).

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/scenario/parse_detail.h"

namespace kvbench::scenario {

using detail::Checker;
using nlohmann::json;

namespace {

// The prompts of answers.file: a JSON array of non-empty strings.
void read_answer_prompts(Checker& c, const std::string& source, Answers& a) {
  const std::filesystem::path path = std::filesystem::path(source).parent_path() / a.file;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    c.problem("answers.file",
              fmt::format("'{}' is not a readable file (looked for {})", a.file, path.string()));
    return;
  }
  std::ifstream in(path, std::ios::binary);
  const json list = json::parse(in, nullptr, false, /*ignore_comments=*/true);
  if (!list.is_array() || list.empty() || list.size() > 256) {
    c.problem("answers.file", fmt::format("'{}': expected a JSON array of 1 to 256 prompts "
                                          "(strings)",
                                          a.file));
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i].get<std::string>().empty()) {
      c.problem("answers.file", fmt::format("'{}' [{}]: expected a non-empty string", a.file, i));
      return;
    }
    a.texts.push_back(list[i].get<std::string>());
  }
  a.prompts = static_cast<int>(a.texts.size());
}

}  // namespace

void detail::parse_precision(Checker& c, const json& v, Precision& p) {
  if (!v.is_object()) {
    c.problem("precision", fmt::format("expected an object like {{\"metric\": \"ttft_ms\", "
                                       "\"half_width\": 0.02, \"max_calls\": 400}}, got {}",
                                       Checker::describe(v)));
    return;
  }
  c.keys(v, "precision", {"metric", "effect", "half_width", "max_calls"});
  const std::vector<std::string> metrics = {"ttft_ms", "server_prompt_ms", "decode_tps",
                                            "server_decode_tps"};
  if (!v.contains("metric")) {
    c.problem("precision.metric",
              "missing: name the metric, one of ttft_ms, server_prompt_ms, "
              "decode_tps, server_decode_tps");
  } else if (const auto m = c.string(v["metric"], "precision.metric", false)) {
    if (std::find(metrics.begin(), metrics.end(), *m) == metrics.end()) {
      c.problem("precision.metric",
                fmt::format("'{}': expected one of ttft_ms, server_prompt_ms, decode_tps, "
                            "server_decode_tps",
                            *m));
    } else {
      p.metric = *m;
    }
  }
  if (v.contains("effect")) {
    p.effect = c.string(v["effect"], "precision.effect", false).value_or(p.effect);
  }
  if (!v.contains("half_width")) {
    c.problem("precision.half_width",
              "missing: the target CI half-width as a fraction of the "
              "estimate, in (0, 1], e.g. 0.02");
  } else if (const json& h = v["half_width"];
             !h.is_number() || h.get<double>() <= 0 || h.get<double>() > 1) {
    c.problem("precision.half_width",
              fmt::format("expected a fraction of the estimate in (0, 1], e.g. 0.02, got {}",
                          Checker::describe(h)));
  } else {
    p.half_width = h.get<double>();
  }
  if (!v.contains("max_calls")) {
    c.problem("precision.max_calls", "missing: the most calls the run may make, 1 to 100000");
  } else {
    p.max_calls = c.integer(v["max_calls"], "precision.max_calls", 1, 100000).value_or(0);
  }
}

void detail::parse_answers(Checker& c, const json& v, Answers& a) {
  if (!v.is_object()) {
    c.problem("answers", fmt::format("expected an object like {{\"prompts\": 16, \"tokens\": "
                                     "64, \"top_k\": 10}}, got {}",
                                     Checker::describe(v)));
    return;
  }
  c.keys(v, "answers", {"prompts", "prompt_tokens", "tokens", "top_k", "reference", "file"});
  if (v.contains("file") && v["file"] != "") {  // "": none (a resolved run's generated prompts)
    a.file = c.string(v["file"], "answers.file", false).value_or("");
    if (v.contains("prompts") || v.contains("prompt_tokens")) {
      c.problem("answers.file",
                "the file's prompts are sent as they are: give 'file' or 'prompts' and "
                "'prompt_tokens', not both");
    } else if (!a.file.empty() && c.reads_files()) {
      read_answer_prompts(c, c.source(), a);
    }
  } else if (!v.contains("prompts")) {
    c.problem("answers.prompts", "missing: how many prompts each block answers, 1 to 256");
  } else {
    a.prompts = c.integer(v["prompts"], "answers.prompts", 1, 256).value_or(0);
  }
  if (v.contains("prompt_tokens")) {
    a.prompt_tokens = c.integer(v["prompt_tokens"], "answers.prompt_tokens", 16, 131072)
                          .value_or(a.prompt_tokens);
  }
  if (v.contains("tokens")) {
    a.tokens = c.integer(v["tokens"], "answers.tokens", 1, 4096).value_or(a.tokens);
  }
  if (v.contains("top_k")) {
    a.top_k = c.integer(v["top_k"], "answers.top_k", 1, 20).value_or(a.top_k);
  }
  if (v.contains("reference") && v["reference"].is_object()) {
    // A pair: {"k": "q8_0", "v": "f16"}, the level "q8_0/f16" (a half not given is f16).
    const json& r = v["reference"];
    c.keys(r, "answers.reference", {"k", "v"});
    const auto half = [&](const char* key) {
      return r.contains(key)
                 ? c.string(r[key], fmt::format("answers.reference.{}", key), false).value_or("f16")
                 : std::string("f16");
    };
    a.reference = cache_level(half("k"), half("v"));
  } else if (v.contains("reference")) {
    a.reference = c.string(v["reference"], "answers.reference", false).value_or(a.reference);
  }
}

// The answers compare cache types on servers kvbench starts, each type against the reference.
void detail::check_answers(Checker& c, const Scenario& s) {
  const Answers& a = s.answers;
  if (!a.active()) {
    return;
  }
  if (!s.server.managed()) {
    c.problem("answers",
              "the answers are compared on a managed server (llama-server of any kind, or "
              "`ollama serve`): the cache type is a setting of a server kvbench starts");
  }
  const auto& types = s.factors.cache_type;
  if (std::find(types.begin(), types.end(), a.reference) == types.end()) {
    c.problem("answers.reference",
              fmt::format("'{}' is not one of factors.cache_type: the reference must be measured",
                          a.reference));
  } else if (types.size() < 2) {
    c.problem("factors.cache_type",
              "the answers compare cache types: give at least two (the reference and another)");
  }
  for (std::size_t i = 0; i < s.factors.num_ctx.size(); ++i) {
    if (a.prompt_tokens + a.tokens > s.factors.num_ctx[i]) {
      c.problem("answers.prompt_tokens",
                fmt::format("{} prompt tokens and {} generated do not fit num_ctx {}",
                            a.prompt_tokens, a.tokens, s.factors.num_ctx[i]));
      break;
    }
  }
}

// The effect precision names must be a term of the headline model this scenario gives.
void detail::check_precision(Checker& c, const Scenario& s) {
  const Precision& p = s.precision;
  if (!p.active()) {
    return;
  }
  if (!s.variants.empty()) {
    c.problem("precision",
              "a run of server variants adds counterbalanced sets through `kvbench "
              "gate` (or `kvbench run --extend`): remove precision");
  }
  const auto& f = s.factors;
  const auto has = [](const auto& v, const auto& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  bool known = false;
  if (p.effect == "prompt_ktokens") {
    known = f.prompt_tokens.size() >= 2;
  } else if (p.effect == "num_ctx_k") {
    known = f.num_ctx.size() >= 2;
  } else if (p.effect.starts_with("cache_type=")) {
    const std::string type = p.effect.substr(11);
    known = type != "f16" && has(f.cache_type, type) && has(f.cache_type, std::string("f16"));
  }
  if (!known) {
    c.problem("precision.effect",
              fmt::format("'{}' is no effect of this scenario: expected prompt_ktokens (with two "
                          "or more prompt_tokens), num_ctx_k (two or more num_ctx) or "
                          "cache_type=<type> (a type measured against f16)",
                          p.effect));
  }
}

}  // namespace kvbench::scenario
