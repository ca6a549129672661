// The server part of a scenario: the cache types, the "server" object (of the
// scenario and of each variant) and its resolved form.

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/core/url.h"
#include "harness/gguf/ggml_types.h"
#include "harness/scenario/kinds.h"
#include "harness/scenario/parse_detail.h"
#include "harness/scenario/scenario.h"

namespace kvbench::scenario {

using detail::Checker;
using nlohmann::json;

const std::vector<std::string>& known_cache_types() {
  static const std::vector<std::string> kTypes = [] {
    std::vector<std::string> names;
    for (const gguf::GgmlType t : gguf::kv_cache_types()) {
      names.emplace_back(gguf::ggml_type_info(t).name);
    }
    return names;
  }();
  return kTypes;
}

namespace {

// Flags kvbench sets itself on a managed server: the address it binds to (always 127.0.0.1),
// the factors it varies, and the API key (handed over in the environment, never on a command
// line). A scenario may not override them through server.args.
void check_server_arg(Checker& c, const std::string& path, const std::string& arg) {
  static const std::vector<std::string> kReserved = {
      "--host", "--port",       "-m",        "--model",        "-c",   "--ctx-size",
      "-np",    "--parallel",   "-ctk",      "--cache-type-k", "-ctv", "--cache-type-v",
      "-fa",    "--flash-attn", "--api-key", "--api-key-file", "-t",   "--threads"};
  const auto control = std::find_if(arg.begin(), arg.end(), [](char ch) {
    return static_cast<unsigned char>(ch) < 0x20 || ch == '\x7f';
  });
  if (control != arg.end()) {
    c.problem(path, fmt::format("contains a control character (code {}) at position {}: each "
                                "argument is one word of the server's argument vector, a line "
                                "break or tab inside it reaches the server as it is",
                                static_cast<int>(static_cast<unsigned char>(*control)),
                                control - arg.begin()));
    return;
  }
  const std::string flag = arg.substr(0, arg.find('='));
  if (std::find(kReserved.begin(), kReserved.end(), flag) != kReserved.end()) {
    c.problem(path, fmt::format("'{}' is set by kvbench itself (the server binds to 127.0.0.1; "
                                "factors, threads and the API key have their own fields)",
                                flag));
  }
}

// server.kind, and the fields only one kind has: endpoint (openai), cache_breakpoint (anthropic).
void parse_kind(Checker& c, const json& v, const std::string& path, ServerSpec& s) {
  if (v.contains("kind")) {
    if (auto k = c.string(v["kind"], path + ".kind", false)) {
      if (const auto kind = kind_named(*k)) {
        s.kind = *kind;
        s.kind_stated = true;
      } else {
        const std::string near = nearest(*k, kind_names());
        c.problem(path + ".kind",
                  fmt::format("unknown server kind '{}'{}: expected {}", *k,
                              near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                              kind_list()));
      }
    }
  }
  if (v.contains("endpoint")) {
    if (auto e = c.string(v["endpoint"], path + ".endpoint", false)) {
      if (!traits(s.kind).has_endpoint) {
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
      if (!traits(s.kind).has_cache_breakpoint) {
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
}

// server.cache_rule: how an attached server caches (min_tokens, step).
void parse_cache_rule(Checker& c, const json& v, const std::string& path, ServerSpec& s) {
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
}

// server.url: an http(s) base URL without credentials, query or fragment; trailing / dropped.
void parse_url(Checker& c, const json& v, const std::string& path, ServerSpec& s) {
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
}

// server.args: extra arguments of a managed server, none of the flags kvbench sets itself.
void parse_args(Checker& c, const json& v, const std::string& path, ServerSpec& s) {
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
}

// server.gpu_layers: set before the server starts (a managed llama-server's -ngl, not also in
// its args), or per request (Ollama's num_gpu); an attached server's layers are where they are.
void parse_gpu_layers(Checker& c, const json& v, const std::string& path, ServerSpec& s) {
  if (!v.contains("gpu_layers")) {
    return;
  }
  s.gpu_layers = c.integer(v["gpu_layers"], path + ".gpu_layers", 0, 100000).value_or(-1);
  for (const auto& a : s.args) {
    const std::string flag = a.substr(0, a.find('='));
    if (flag == "-ngl" || flag == "--gpu-layers" || flag == "--n-gpu-layers") {
      c.problem(path + ".gpu_layers",
                fmt::format("given twice: as gpu_layers and as '{}' in args; keep one", flag));
    }
  }
  if (!v.contains("url") || s.kind == ServerKind::ollama) {
    return;
  }
  c.problem(path + ".gpu_layers",
            "an attached server (url) placed its layers when it started: start it with its own "
            "-ngl, or let kvbench manage the server (no url)");
}

// server.batch_size and server.ubatch_size: set before a managed llama-server starts (not also in
// its args), or per request (Ollama's num_batch); an attached llama-server keeps its own.
void parse_batch(Checker& c, const json& v, const std::string& path, ServerSpec& s) {
  const struct {
    const char* key;
    std::optional<int>& to;
    std::initializer_list<const char*> flags;
  } settings[] = {{"batch_size", s.batch_size, {"-b", "--batch-size"}},
                  {"ubatch_size", s.ubatch_size, {"-ub", "--ubatch-size"}}};
  for (const auto& setting : settings) {
    if (!v.contains(setting.key)) {
      continue;
    }
    const std::string at = path + "." + setting.key;
    setting.to = c.integer(v[setting.key], at, 1, kMaxCtx);
    for (const auto& a : s.args) {
      const std::string flag = a.substr(0, a.find('='));
      if (std::find(setting.flags.begin(), setting.flags.end(), flag) != setting.flags.end()) {
        c.problem(
            at, fmt::format("given twice: as {} and as '{}' in args; keep one", setting.key, flag));
      }
    }
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
          "endpoint", "cache_breakpoint", "cache_rule", "gpu_layers", "batch_size", "ubatch_size"});
  parse_kind(c, v, path, s);
  parse_cache_rule(c, v, path, s);
  if (v.contains("model")) {
    s.model = c.string(v["model"], path + ".model", false).value_or(s.model);
  }
  parse_url(c, v, path, s);
  if (v.contains("binary")) {
    s.binary = c.string(v["binary"], path + ".binary", false).value_or("");
  }
  parse_args(c, v, path, s);
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
  parse_gpu_layers(c, v, path, s);
  parse_batch(c, v, path, s);
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

void detail::check_batch(Checker& c, const Scenario& s) {
  const auto& f = s.factors;
  const ServerSpec& server = s.server;
  if (!f.batch_size.empty() && server.batch_size) {
    c.problem("factors.batch_size",
              "server.batch_size gives it too: give one value there, or the levels here, not both");
  }
  if (!f.ubatch_size.empty() && server.ubatch_size) {
    c.problem("factors.ubatch_size",
              "server.ubatch_size gives it too: give one value there, or the levels here, not "
              "both");
  }
  const bool batch = !f.batch_size.empty() || server.batch_size;
  const bool ubatch = !f.ubatch_size.empty() || server.ubatch_size;
  const char* const where = f.ubatch_size.empty() ? "server.ubatch_size" : "factors.ubatch_size";
  if (ubatch && server.kind == ServerKind::ollama) {
    c.problem(where, "Ollama has no micro-batch setting (its num_batch is batch_size): remove it");
  } else if ((batch || ubatch) && !server.managed() && server.kind != ServerKind::ollama) {
    c.problem(f.batch_size.empty() && f.ubatch_size.empty() ? "server" : "factors",
              "an attached server (server.url) keeps the batch sizes it was started with: start "
              "it with --batch-size and --ubatch-size, or let kvbench manage the server (no url)");
  }
  const auto levels = [](const std::vector<int>& factor, const std::optional<int>& field) {
    return !factor.empty() ? factor : field ? std::vector<int>{*field} : std::vector<int>{};
  };
  const auto batches = levels(f.batch_size, server.batch_size);
  for (const int u : levels(f.ubatch_size, server.ubatch_size)) {
    for (const int b : batches) {
      if (u > b) {
        c.problem(where, fmt::format("ubatch_size {} is above batch_size {}: llama-server's "
                                     "micro-batch is at most its batch; give at most {}",
                                     u, b, b));
        return;
      }
    }
  }
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
  if (traits(spec.kind).has_endpoint) {
    server["endpoint"] = spec.endpoint;
  }
  if (traits(spec.kind).has_cache_breakpoint) {
    server["cache_breakpoint"] = spec.cache_breakpoint;
  }
  if (spec.gpu_layers >= 0) {
    server["gpu_layers"] = spec.gpu_layers;
  }
  if (spec.batch_size) {
    server["batch_size"] = *spec.batch_size;
  }
  if (spec.ubatch_size) {
    server["ubatch_size"] = *spec.ubatch_size;
  }
  if (spec.cache_rule.stated()) {
    server["cache_rule"] = {{"min_tokens", spec.cache_rule.min_tokens},
                            {"step", spec.cache_rule.step}};
  }
  return server;
}

}  // namespace kvbench::scenario
