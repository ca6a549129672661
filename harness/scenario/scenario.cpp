#include "harness/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/url.h"
#include "harness/core/utf8.h"
#include "harness/scenario/locate.h"
#include "harness/scenario/parse_detail.h"
#include "harness/scenario/suggest.h"

namespace kvbench::scenario {

using nlohmann::json;

std::string_view to_string(ServerKind kind) {
  switch (kind) {
    case ServerKind::ollama:
      return "ollama";
    case ServerKind::openai:
      return "openai";
    case ServerKind::anthropic:
      return "anthropic";
    case ServerKind::llama_server:
      break;
  }
  return "llama-server";
}

bool served_by_llama_server(ServerKind kind) {
  return kind != ServerKind::ollama;
}

const std::vector<std::string>& known_cache_types() {
  static const std::vector<std::string> kTypes = {"f32",  "f16",    "bf16", "q8_0", "q4_0",
                                                  "q4_1", "iq4_nl", "q5_0", "q5_1"};
  return kTypes;
}

namespace {

using detail::Checker;

constexpr int kMaxPromptTokens = 1 << 20;
constexpr int kMaxCtx = 1 << 21;

// A factor: a single value or a non-empty array of distinct values.
template <typename T, typename Fn>
std::vector<T> factor_list(Checker& c, const json& v, const std::string& path, Fn&& item) {
  std::vector<T> out;
  const json arr = v.is_array() ? v : json::array({v});
  if (arr.empty()) {
    c.problem(path, "expected at least one value");
  }
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = v.is_array() ? fmt::format("{}[{}]", path, i) : path;
    if (auto x = item(arr[i], p)) {
      if (std::find(out.begin(), out.end(), *x) != out.end()) {
        c.problem(p, fmt::format("duplicate value {}", arr[i].dump()));
      } else {
        out.push_back(*x);
      }
    }
  }
  return out;
}

// Flags kvbench sets itself on a managed server: the address it binds to (always 127.0.0.1),
// the factors it varies, and the API key (handed over in the environment, never on a command
// line). A scenario may not override them through server.args.
void check_server_arg(Checker& c, const std::string& path, const std::string& arg) {
  static const std::vector<std::string> kReserved = {
      "--host", "--port",       "-m",        "--model",        "-c",   "--ctx-size",
      "-np",    "--parallel",   "-ctk",      "--cache-type-k", "-ctv", "--cache-type-v",
      "-fa",    "--flash-attn", "--api-key", "--api-key-file", "-t",   "--threads"};
  const std::string flag = arg.substr(0, arg.find('='));
  if (std::find(kReserved.begin(), kReserved.end(), flag) != kReserved.end()) {
    c.problem(path, fmt::format("'{}' is set by kvbench itself (the server binds to 127.0.0.1; "
                                "factors, threads and the API key have their own fields)",
                                flag));
  }
}

}  // namespace

void detail::parse_server(Checker& c, const json& v, const std::string& path, ServerSpec& s) {
  if (!v.is_object()) {
    c.problem(path, fmt::format("expected an object, got {}", Checker::describe(v)));
    return;
  }
  c.keys(v, path,
         {"kind", "model", "url", "binary", "args", "threads", "flash_attn", "api_key_env",
          "endpoint", "cache_breakpoint", "cache_rule"});
  if (v.contains("kind")) {
    if (auto k = c.string(v["kind"], path + ".kind", false)) {
      if (*k == "llama-server") {
        s.kind = ServerKind::llama_server;
      } else if (*k == "ollama") {
        s.kind = ServerKind::ollama;
      } else if (*k == "openai") {
        s.kind = ServerKind::openai;
      } else if (*k == "anthropic") {
        s.kind = ServerKind::anthropic;
      } else {
        c.problem(path + ".kind",
                  fmt::format("unknown server kind '{}': expected 'llama-server', 'ollama', "
                              "'openai' or 'anthropic'",
                              *k));
      }
    }
  }
  if (v.contains("endpoint")) {
    if (auto e = c.string(v["endpoint"], path + ".endpoint", false)) {
      if (s.kind != ServerKind::openai) {
        c.problem(path + ".endpoint", "only the 'openai' kind has an endpoint to choose");
      } else if (*e != "chat" && *e != "completions") {
        c.problem(path + ".endpoint",
                  fmt::format("'{}': expected 'chat' (/chat/completions) or 'completions'", *e));
      } else {
        s.endpoint = *e;
      }
    }
  }
  if (v.contains("cache_breakpoint")) {
    if (auto b = c.string(v["cache_breakpoint"], path + ".cache_breakpoint", false)) {
      if (s.kind != ServerKind::anthropic) {
        c.problem(path + ".cache_breakpoint",
                  "only the 'anthropic' kind takes cache_control breakpoints (the others cache "
                  "without being asked)");
      } else if (*b != "none" && *b != "end") {
        c.problem(path + ".cache_breakpoint",
                  fmt::format("'{}': expected 'end' (cache the whole prompt) or 'none'", *b));
      } else {
        s.cache_breakpoint = *b;
      }
    }
  }
  if (v.contains("cache_rule")) {
    const json& r = v["cache_rule"];
    const std::string rpath = path + ".cache_rule";
    if (!r.is_object()) {
      c.problem(rpath, fmt::format("expected an object such as {{\"min_tokens\": 1024, "
                                   "\"step\": 128}}, got {}",
                                   Checker::describe(r)));
    } else {
      c.keys(r, rpath, {"min_tokens", "step"});
      if (r.contains("min_tokens")) {
        s.cache_rule.min_tokens =
            c.integer(r["min_tokens"], rpath + ".min_tokens", 0, 1'000'000).value_or(0);
      }
      if (r.contains("step")) {
        s.cache_rule.step = c.integer(r["step"], rpath + ".step", 1, 1'000'000).value_or(1);
      }
    }
  }
  if (v.contains("model")) {
    s.model = c.string(v["model"], path + ".model", false).value_or(s.model);
  }
  if (v.contains("url")) {
    s.url = c.string(v["url"], path + ".url", false).value_or("");
    if (url_has_credentials(s.url)) {
      // Never echoed: the password would be in the message.
      c.problem(path + ".url",
                "a URL with credentials in it (user:password@) is refused: put the key in an "
                "environment variable and name it with server.api_key_env");
    } else if (!s.url.empty() && s.url.rfind("http://", 0) != 0 &&
               s.url.rfind("https://", 0) != 0) {
      c.problem(path + ".url",
                fmt::format("'{}' is not an http:// or https:// URL", url_for_display(s.url)));
    } else if (s.url.find_first_of("?#") != std::string::npos) {
      c.problem(path + ".url",
                fmt::format("'{}': expected the server's base URL, without a query (?...) or "
                            "fragment (#...)",
                            url_for_display(s.url)));
    }
    while (!s.url.empty() && s.url.back() == '/') {
      s.url.pop_back();
    }
  }
  if (v.contains("binary")) {
    s.binary = c.string(v["binary"], path + ".binary", false).value_or("");
  }
  if (v.contains("args")) {
    if (!v["args"].is_array()) {
      c.problem(path + ".args", "expected an array of strings, one per argument");
    } else {
      s.args.clear();
      for (std::size_t i = 0; i < v["args"].size(); ++i) {
        const std::string arg_path = fmt::format("{}.args[{}]", path, i);
        if (auto a = c.string(v["args"][i], arg_path, false)) {
          check_server_arg(c, arg_path, *a);
          s.args.push_back(*a);
        }
      }
    }
  }
  if (v.contains("threads")) {
    s.threads = c.integer(v["threads"], path + ".threads", 0, 1024).value_or(0);
  }
  if (v.contains("flash_attn")) {
    if (auto fa = c.string(v["flash_attn"], path + ".flash_attn", false)) {
      if (*fa != "on" && *fa != "off" && *fa != "auto") {
        c.problem(path + ".flash_attn", fmt::format("'{}': expected 'on', 'off' or 'auto'", *fa));
      } else {
        s.flash_attn = *fa;
      }
    }
  }
  if (v.contains("api_key_env")) {
    s.api_key_env = c.string(v["api_key_env"], path + ".api_key_env", false).value_or("");
  }
  if (s.url.empty() && v.contains("cache_rule")) {
    c.problem(path + ".cache_rule",
              "a managed llama-server caches every shared token: 'cache_rule' states how an "
              "attached server (server.url) caches");
  }
  if (!s.url.empty() && (v.contains("binary") || v.contains("args") || v.contains("threads"))) {
    c.problem(path,
              "'url' attaches to a running server: 'binary', 'args' and 'threads' "
              "apply only to a managed server");
  }
}

namespace {

void parse_factors(Checker& c, const json& v, Factors& f, bool conversation) {
  if (!v.is_object()) {
    c.problem("factors", fmt::format("expected an object, got {}", Checker::describe(v)));
    return;
  }
  c.keys(v, "factors", {"prompt_tokens", "num_ctx", "cache_type", "edit_position"});
  if (v.contains("edit_position")) {
    f.edit_position = factor_list<EditPosition>(
        c, v["edit_position"], "factors.edit_position",
        [&](const json& x, const std::string& p) -> std::optional<EditPosition> {
          std::string why;
          auto e = parse_edit_position(x, why);
          if (!e) {
            c.problem(p, why);
          }
          return e;
        });
  }
  if (!v.contains("prompt_tokens")) {
    if (!conversation) {
      c.problem("factors.prompt_tokens", "missing: give the prompt lengths in tokens");
    }
  } else {
    f.prompt_tokens = factor_list<int>(
        c, v["prompt_tokens"], "factors.prompt_tokens",
        [&](const json& x, const std::string& p) { return c.integer(x, p, 1, kMaxPromptTokens); });
  }
  if (v.contains("num_ctx")) {
    f.num_ctx = factor_list<int>(
        c, v["num_ctx"], "factors.num_ctx",
        [&](const json& x, const std::string& p) { return c.integer(x, p, 256, kMaxCtx); });
  }
  if (v.contains("cache_type")) {
    f.cache_type = factor_list<std::string>(
        c, v["cache_type"], "factors.cache_type",
        [&](const json& x, const std::string& p) -> std::optional<std::string> {
          auto s = c.string(x, p, false);
          if (!s) {
            return std::nullopt;
          }
          const auto& known = known_cache_types();
          if (std::find(known.begin(), known.end(), *s) == known.end()) {
            const std::string near = nearest(*s, known);
            c.problem(p, fmt::format("unknown cache type '{}'{}: expected one of {}", *s,
                                     near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                                     fmt::join(known, ", ")));
            return std::nullopt;
          }
          return s;
        });
  }
}

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
  }
}

void parse_precision(Checker& c, const json& v, Precision& p) {
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

void parse_answers(Checker& c, const json& v, Answers& a) {
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
    } else if (!a.file.empty()) {
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
  if (v.contains("reference")) {
    a.reference = c.string(v["reference"], "answers.reference", false).value_or(a.reference);
  }
}

// The answers compare cache types on servers kvbench starts, each type against the reference.
void check_answers(Checker& c, const Scenario& s) {
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

void parse_top(Checker& c, const json& doc, Scenario& s) {
  c.keys(doc, "",
         {"name", "description", "server", "factors", "repeats", "block_repeats", "seed",
          "max_tokens", "warmup", "timeout_s", "unique_first_line", "probes", "variants", "gate",
          "concurrency", "precision", "answers", "conversation"});
  if (doc.contains("conversation")) {
    detail::parse_conversation(c, doc["conversation"], s.conversation);
  }
  if (doc.contains("answers")) {
    parse_answers(c, doc["answers"], s.answers);
  }
  if (doc.contains("precision")) {
    parse_precision(c, doc["precision"], s.precision);
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
  const bool conversation = doc.contains("conversation");
  if (conversation && doc.contains("repeats")) {
    c.problem("repeats", "a conversation repeats by its turns and conversations: remove repeats");
  }
  if (conversation && doc.contains("max_tokens")) {
    c.problem("max_tokens",
              "a conversation's answers are conversation.answer_tokens long: remove max_tokens");
  }
  if (!doc.contains("factors")) {
    if (!conversation) {
      c.problem("factors", "missing: give at least factors.prompt_tokens");
    }
  } else {
    parse_factors(c, doc["factors"], s.factors, conversation);
  }
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
// The effect precision names must be a term of the headline model this scenario gives.
void check_precision(Checker& c, const Scenario& s) {
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

void check_concurrency(Checker& c, const Scenario& s) {
  if (!s.concurrency.active()) {
    return;
  }
  if (!s.factors.edit_position.empty()) {
    c.problem("concurrency",
              "the edit-position experiment reads each pair on one slot: run it without "
              "concurrency");
  }
  if (!s.server.managed() && s.server.kind != ServerKind::ollama &&
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
      const auto& t = s.factors.cache_type[i];
      if (t != "f16" && t != "f32" && t != "bf16" && s.server.flash_attn == "off") {
        c.problem(fmt::format("factors.cache_type[{}]", i),
                  fmt::format("a quantized V cache ('{}') needs flash attention, but "
                              "server.flash_attn is 'off'",
                              t));
      }
    }
  }
  if (!s.factors.edit_position.empty() && !s.unique_first_line) {
    c.problem("factors.edit_position",
              "the cold read of each pair needs a unique first line: remove "
              "'unique_first_line': false");
  }
  check_concurrency(c, s);
  check_precision(c, s);
  check_answers(c, s);
  detail::check_conversation(c, s);
  if (!s.server.managed()) {
    // Ollama takes num_ctx per request (a change reloads the model); llama-server needs a restart.
    if (s.factors.num_ctx.size() > 1 && s.server.kind != ServerKind::ollama) {
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

Scenario parse_scenario(std::string_view text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw InputError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
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
  if (c.ok()) {
    check_consistency(c, s);
    detail::check_variants_and_gate(c, s, doc.contains("gate"));
  }
  c.throw_if_any();
  s.resolved = to_json(s);
  return s;
}

Scenario load_scenario(const std::string& path) {
  constexpr std::uintmax_t kMaxBytes = 1 << 20;  // a scenario is at most 1 MiB
  std::string text;
  if (path == "-") {
    text.resize(kMaxBytes + 1);
    std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(std::cin.gcount()));
  } else {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st)) {
      throw InputError(fmt::format("{}: cannot read the scenario file (no such file)", path));
    }
    if (!std::filesystem::is_regular_file(st)) {
      throw InputError(fmt::format(
          "{}: not a regular file (a folder, FIFO or device): give a scenario file, or - for "
          "standard input",
          path));
    }
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxBytes) {
      throw InputError(fmt::format("{}: {} bytes: a scenario file is at most 1 MiB (1048576 bytes)",
                                   path, size));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      throw InputError(fmt::format("{}: cannot read the scenario file", path));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  if (text.size() > kMaxBytes) {
    throw InputError(fmt::format("{}: more than 1 MiB (1048576 bytes): a scenario is at most that",
                                 path == "-" ? "standard input" : path));
  }
  if (valid_utf8(text) != text) {
    std::size_t bad = 0;
    const std::string fixed = valid_utf8(text);
    while (bad < text.size() && bad < fixed.size() && text[bad] == fixed[bad]) {
      ++bad;
    }
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n');
    throw InputError(fmt::format("{}: line {}: not valid UTF-8 (byte {}): save the file as UTF-8",
                                 path == "-" ? "standard input" : path, line, bad));
  }
  return parse_scenario(text, path == "-" ? "standard input" : path);
}

json detail::server_to_json(const ServerSpec& spec) {
  json server = {
      {"kind", to_string(spec.kind)}, {"model", spec.model}, {"flash_attn", spec.flash_attn}};
  if (spec.managed()) {
    server["threads"] = spec.threads;
    server["args"] = spec.args;
  } else {
    server["url"] = spec.url;
  }
  if (!spec.binary.empty()) {
    server["binary"] = spec.binary;
  }
  if (!spec.api_key_env.empty()) {
    server["api_key_env"] = spec.api_key_env;
  }
  if (spec.kind == ServerKind::openai) {
    server["endpoint"] = spec.endpoint;
  }
  if (spec.kind == ServerKind::anthropic) {
    server["cache_breakpoint"] = spec.cache_breakpoint;
  }
  if (spec.cache_rule.stated()) {
    server["cache_rule"] = {{"min_tokens", spec.cache_rule.min_tokens},
                            {"step", spec.cache_rule.step}};
  }
  return server;
}

json to_json(const Scenario& s) {
  const json server = detail::server_to_json(s.server);
  json factors = {{"prompt_tokens", s.factors.prompt_tokens},
                  {"num_ctx", s.factors.num_ctx},
                  {"cache_type", s.factors.cache_type}};
  if (s.factors.prompt_tokens.empty()) {
    factors.erase("prompt_tokens");  // a conversation sizes its prompts by its turns
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
  }
  if (s.precision.active()) {
    out["precision"] = {{"metric", s.precision.metric},
                        {"effect", s.precision.effect},
                        {"half_width", s.precision.half_width},
                        {"max_calls", s.precision.max_calls}};
  }
  if (s.conversation.active()) {
    out["conversation"] = detail::conversation_to_json(s.conversation);
    out.erase("repeats");  // a conversation's turns and answer_tokens take their place
    out.erase("max_tokens");
  }
  if (s.concurrency.active()) {
    out["concurrency"] = to_json(s.concurrency);
  }
  return out;
}

}  // namespace kvbench::scenario
