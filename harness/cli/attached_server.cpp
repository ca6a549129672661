#include "harness/cli/attached_server.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/scenario_flags.h"
#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/core/url.h"
#include "harness/gguf/model_shape.h"
#include "harness/http/curl_transport.h"
#include "harness/scenario/kinds.h"
#include "harness/servers/compat_servers.h"
#include "harness/servers/find_kind.h"
#include "harness/servers/server_target.h"

namespace kvbench::cli {

namespace {

std::string found_kind_name(const servers::FoundServer& f) {
  return f.kind == scenario::ServerKind::openai ? "an OpenAI-compatible server"
                                                : std::string(scenario::to_string(*f.kind));
}

// The flags with what the server found lets the user leave out: its kind (where none was
// stated), the context it has (the quick start at a llama-server, no --num-ctx given) and its
// model (where none was named).
scenario::ScenarioEdits edits_from_found(const std::string& arg, const scenario::ScenarioEdits& e,
                                         const servers::FoundServer& found, bool stated,
                                         const scenario::Scenario& s, run::RunOptions& ro) {
  auto edits = e;
  if (!stated) {
    edits.kind = std::string(scenario::to_string(*found.kind));
  }
  if (arg.empty() && e.num_ctx.empty() && !sets_field(e, "factors.num_ctx") &&
      found.reports.contains("n_ctx") && found.reports["n_ctx"].is_number_integer()) {
    edits.name = e.name.empty() ? e.made_name() : e.name;
    edits.num_ctx = {found.reports["n_ctx"].get<int>()};
  }
  if (ro.model.empty() && gguf::synthetic_preset(s.server.model)) {
    if (found.reports.contains("model_path")) {
      ro.model = found.reports["model_path"].get<std::string>();
    } else if (found.reports.contains("models") && !found.reports["models"].empty()) {
      ro.model = found.reports["models"].front().get<std::string>();
      fmt::print(stderr, "model: {} (the first the server lists; --model names another)\n",
                 ro.model);
    }
  }
  return edits;
}

}  // namespace

scenario::Scenario scenario_to_run(const std::string& arg, const scenario::ScenarioEdits& e,
                                   run::RunOptions& ro) {
  const bool attached = !ro.url.empty();
  const auto made = scenario_with_flags(arg, e, attached, ro.model);
  // What the options make of it, checked before the server is asked (the model once it is).
  const auto s = run::with_overrides(made, ro, false);
  if (s.server.managed() || !s.variants.empty()) {
    return run::with_overrides(made, ro);
  }
  const bool stated = kind_stated(arg, e, s);
  const std::string key = [&] {
    try {
      return servers::api_key_from(s.server);
    } catch (const InputError& err) {
      throw InputError(fmt::format("{}: {}", s.source, err.what()));
    }
  }();
  SteadyClock clock;
  http::CurlTransport transport(clock);
  const auto found =
      servers::find_server(transport, s.server.url, servers::api_headers(s.server.kind, key));
  if (!found.kind) {
    if (stated) {
      return run::with_overrides(made, ro);  // its own session says what is wrong, as before
    }
    throw Error(fmt::format(
        "the server at {} answers as no kind kvbench knows ({}); start it, fix the URL, or name "
        "its kind with --kind ({})",
        url_for_display(s.server.url), servers::tried_text(found), scenario::kind_list()));
  }
  if (stated && !servers::serves(*found.kind, s.server.kind)) {
    throw InputError(fmt::format(
        "{}: server.kind is '{}', but the server at {} answers as {} ({}): name --kind {} or fix "
        "the URL",
        s.source, scenario::to_string(s.server.kind), url_for_display(found.root),
        found_kind_name(found), found.answered, scenario::to_string(*found.kind)));
  }
  const auto kind = stated ? s.server.kind : *found.kind;
  const auto edits = edits_from_found(arg, e, found, stated, s, ro);
  ro.url = servers::url_for(found, kind, s.server.url);
  auto out = run::with_overrides(scenario_with_flags(arg, edits, attached, ro.model), ro);
  ro.found_server = servers::found_json(found, out);
  fmt::print(stderr, "{}\n", servers::describe_found(found, kind));
  const auto& ctx = ro.found_server["stated"];
  if (ctx.contains("num_ctx") && ctx["num_ctx"].value("check", "") == "differs") {
    fmt::print(stderr,
               "warning: {}: num_ctx {} is stated, but the server reports {} tokens per slot; the "
               "KV arithmetic uses the stated one\n",
               out.source, ctx["num_ctx"]["value"].get<int>(), ctx["num_ctx"]["server"].dump());
  }
  return out;
}

}  // namespace kvbench::cli
