#include "harness/scenario/scenario.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/scenario/locate.h"
#include "harness/scenario/suggest.h"

namespace kvbench::scenario {

using nlohmann::json;

std::string_view to_string(ServerKind kind) {
  return kind == ServerKind::ollama ? "ollama" : "llama-server";
}

const std::vector<std::string>& known_cache_types() {
  static const std::vector<std::string> kTypes = {"f32",  "f16",    "bf16", "q8_0", "q4_0",
                                                  "q4_1", "iq4_nl", "q5_0", "q5_1"};
  return kTypes;
}

namespace {

constexpr int kMaxPromptTokens = 1 << 20;
constexpr int kMaxCtx = 1 << 21;

// Collects every problem with its path, then throws them together.
class Checker {
 public:
  Checker(std::string source, std::string_view text)
      : source_(std::move(source)), lines_(value_lines(text)) {}
  // "<file>:<line>: <path>: <what>"; the line is that of the value at `path`, or of its nearest
  // enclosing value when the path is missing.
  void problem(const std::string& path, const std::string& what) {
    problems_.push_back(fmt::format("{}{}: {}: {}", source_, line_suffix(path),
                                    path.empty() ? "(top level)" : path, what));
  }
  void throw_if_any() const {
    if (!problems_.empty()) {
      throw InputError(problems_);
    }
  }
  bool ok() const { return problems_.empty(); }

  // Unknown keys, with a suggestion for the nearest known one.
  void keys(const json& obj, const std::string& path, const std::vector<std::string>& allowed) {
    for (const auto& [key, value] : obj.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        const std::string near = nearest(key, allowed);
        problem(join(path, key), near.empty()
                                     ? "unknown key"
                                     : fmt::format("unknown key (did you mean '{}'?)", near));
      }
    }
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  std::optional<int> integer(const json& v, const std::string& path, long long lo, long long hi) {
    if (!v.is_number_integer()) {
      problem(path, fmt::format("expected an integer, got {}", describe(v)));
      return std::nullopt;
    }
    const auto x = v.get<long long>();
    if (x < lo || x > hi) {
      problem(path, fmt::format("{} is out of range: expected {} to {}", x, lo, hi));
      return std::nullopt;
    }
    return static_cast<int>(x);
  }

  std::optional<std::string> string(const json& v, const std::string& path, bool allow_empty) {
    if (!v.is_string()) {
      problem(path, fmt::format("expected a string, got {}", describe(v)));
      return std::nullopt;
    }
    auto s = v.get<std::string>();
    if (!allow_empty && s.empty()) {
      problem(path, "expected a non-empty string");
      return std::nullopt;
    }
    return s;
  }

  static std::string describe(const json& v) {
    if (v.is_string()) {
      return fmt::format("the string {}", v.dump());
    }
    if (v.is_array()) {
      return "an array";
    }
    if (v.is_object()) {
      return "an object";
    }
    if (v.is_null()) {
      return "null";
    }
    if (v.is_boolean()) {
      return fmt::format("the boolean {}", v.dump());
    }
    return fmt::format("the number {}", v.dump());
  }

 private:
  std::string line_suffix(std::string_view path) const {
    while (true) {
      if (auto it = lines_.find(std::string(path)); it != lines_.end()) {
        return fmt::format(":{}", it->second);
      }
      if (path.empty()) {
        return {};
      }
      const auto cut = path.find_last_of(".[");
      path = cut == std::string_view::npos ? std::string_view() : path.substr(0, cut);
    }
  }

  std::string source_;
  std::map<std::string, int> lines_;
  std::vector<std::string> problems_;
};

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

void parse_server(Checker& c, const json& v, ServerSpec& s) {
  if (!v.is_object()) {
    c.problem("server", fmt::format("expected an object, got {}", Checker::describe(v)));
    return;
  }
  c.keys(v, "server",
         {"kind", "model", "url", "binary", "args", "threads", "flash_attn", "api_key_env"});
  if (v.contains("kind")) {
    if (auto k = c.string(v["kind"], "server.kind", false)) {
      if (*k == "llama-server") {
        s.kind = ServerKind::llama_server;
      } else if (*k == "ollama") {
        s.kind = ServerKind::ollama;
      } else {
        c.problem("server.kind", fmt::format("unknown server kind '{}': expected 'llama-server' or "
                                             "'ollama'",
                                             *k));
      }
    }
  }
  if (v.contains("model")) {
    s.model = c.string(v["model"], "server.model", false).value_or(s.model);
  }
  if (v.contains("url")) {
    s.url = c.string(v["url"], "server.url", false).value_or("");
    if (!s.url.empty() && s.url.rfind("http://", 0) != 0 && s.url.rfind("https://", 0) != 0) {
      c.problem("server.url", fmt::format("'{}' is not an http:// or https:// URL", s.url));
    }
    while (!s.url.empty() && s.url.back() == '/') {
      s.url.pop_back();
    }
  }
  if (v.contains("binary")) {
    s.binary = c.string(v["binary"], "server.binary", false).value_or("");
  }
  if (v.contains("args")) {
    if (!v["args"].is_array()) {
      c.problem("server.args", "expected an array of strings, one per argument");
    } else {
      for (std::size_t i = 0; i < v["args"].size(); ++i) {
        const std::string path = fmt::format("server.args[{}]", i);
        if (auto a = c.string(v["args"][i], path, false)) {
          check_server_arg(c, path, *a);
          s.args.push_back(*a);
        }
      }
    }
  }
  if (v.contains("threads")) {
    s.threads = c.integer(v["threads"], "server.threads", 0, 1024).value_or(0);
  }
  if (v.contains("flash_attn")) {
    if (auto fa = c.string(v["flash_attn"], "server.flash_attn", false)) {
      if (*fa != "on" && *fa != "off" && *fa != "auto") {
        c.problem("server.flash_attn", fmt::format("'{}': expected 'on', 'off' or 'auto'", *fa));
      } else {
        s.flash_attn = *fa;
      }
    }
  }
  if (v.contains("api_key_env")) {
    s.api_key_env = c.string(v["api_key_env"], "server.api_key_env", false).value_or("");
  }
  if (!s.url.empty() && (v.contains("binary") || v.contains("args") || v.contains("threads"))) {
    c.problem("server",
              "'url' attaches to a running server: 'binary', 'args' and 'threads' "
              "apply only to a managed server");
  }
}

void parse_factors(Checker& c, const json& v, Factors& f) {
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
    c.problem("factors.prompt_tokens", "missing: give the prompt lengths in tokens");
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

void parse_top(Checker& c, const json& doc, Scenario& s) {
  c.keys(doc, "",
         {"name", "description", "server", "factors", "repeats", "block_repeats", "seed",
          "max_tokens", "warmup", "timeout_s", "unique_first_line", "probes", "concurrency"});
  if (!doc.contains("name")) {
    c.problem("name", "missing: give the scenario a name");
  } else {
    s.name = c.string(doc["name"], "name", false).value_or("");
  }
  if (doc.contains("description")) {
    s.description = c.string(doc["description"], "description", true).value_or("");
  }
  if (doc.contains("server")) {
    parse_server(c, doc["server"], s.server);
  }
  if (!doc.contains("factors")) {
    c.problem("factors", "missing: give at least factors.prompt_tokens");
  } else {
    parse_factors(c, doc["factors"], s.factors);
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

// Concurrency runs many llama-server slots at once; the pairs of the edit-position experiment
// need one slot to themselves.
void check_concurrency(Checker& c, const Scenario& s) {
  if (!s.concurrency.active()) {
    return;
  }
  if (s.server.kind == ServerKind::ollama) {
    c.problem("concurrency", "concurrency runs on llama-server only for now");
  }
  if (!s.factors.edit_position.empty()) {
    c.problem("concurrency",
              "the edit-position experiment reads each pair on one slot: run it without "
              "concurrency");
  }
  if (!s.server.managed() && s.concurrency.slot_levels().size() > 1) {
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
  if (s.server.managed() && s.server.kind == ServerKind::llama_server) {
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
  if (!s.factors.edit_position.empty() && s.server.kind == ServerKind::ollama) {
    c.problem("factors.edit_position",
              "the edit-position experiment needs the server's token ids, which Ollama does not "
              "give: run it on llama-server");
  }
  if (!s.factors.edit_position.empty() && !s.unique_first_line) {
    c.problem("factors.edit_position",
              "the cold read of each pair needs a unique first line: remove "
              "'unique_first_line': false");
  }
  check_concurrency(c, s);
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
  Scenario s;
  s.source = source;
  parse_top(c, doc, s);
  if (c.ok()) {
    check_consistency(c, s);
  }
  c.throw_if_any();
  s.resolved = to_json(s);
  return s;
}

Scenario load_scenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(fmt::format("{}: cannot read the scenario file", path));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_scenario(ss.str(), path);
}

json to_json(const Scenario& s) {
  json server = {{"kind", to_string(s.server.kind)},
                 {"model", s.server.model},
                 {"flash_attn", s.server.flash_attn}};
  if (s.server.managed()) {
    server["threads"] = s.server.threads;
    server["args"] = s.server.args;
  } else {
    server["url"] = s.server.url;
  }
  if (!s.server.binary.empty()) {
    server["binary"] = s.server.binary;
  }
  if (!s.server.api_key_env.empty()) {
    server["api_key_env"] = s.server.api_key_env;
  }
  json factors = {{"prompt_tokens", s.factors.prompt_tokens},
                  {"num_ctx", s.factors.num_ctx},
                  {"cache_type", s.factors.cache_type}};
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
  if (s.concurrency.active()) {
    out["concurrency"] = to_json(s.concurrency);
  }
  return out;
}

}  // namespace kvbench::scenario
