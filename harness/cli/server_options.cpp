#include "harness/cli/server_options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace kvbench::cli {

void add_server_options(CLI::App* cmd, ServerCliOptions& o, const std::string& results_help,
                        bool model_and_url) {
  const std::string group = "Server and results";
  cmd->add_option("--results", o.results, results_help)
      ->capture_default_str()
      ->type_name("DIR")
      ->group(group);
  cmd->add_option("--server-bin", o.server_bin, "llama-server or ollama executable (managed mode)")
      ->type_name("FILE")
      ->group(group);
  if (model_and_url) {
    cmd->add_option("--model", o.models,
                    "Model: a GGUF path, synthetic:<preset>, or an Ollama model name; given "
                    "twice or more, one variant per model, compared side by side")
        ->allow_extra_args(false)
        ->type_name("MODEL")
        ->group(group);
    cmd->add_option("--url", o.url, "Attach to a running server at this URL instead")
        ->type_name("URL")
        ->group(group);
  }
  cmd->add_option("--models-dir", o.models_dir, "Where synthetic models are written")
      ->type_name("DIR")
      ->group(group);
  cmd->add_option("--start-timeout", o.start_timeout_s,
                  "Seconds a managed server may take to become ready (1 to 3600); one that is "
                  "not ready by then is stopped and its block recorded as never started")
      ->check(CLI::Range(1, kMaxStartTimeoutS))
      ->capture_default_str()
      ->type_name("SECONDS")
      ->group(group);
  cmd->add_option("--label", o.labels,
                  "NAME=VALUE kept in run.json and shown in the report (repeatable), e.g. "
                  "--label host=ci-7 --label commit=abc123")
      ->type_name("NAME=VALUE")
      ->group(group);
  cmd->add_flag("--force", o.force,
                "Start a managed server even when its model and KV cache at a planned num_ctx "
                "exceed the memory available")
      ->group(group);
  add_progress_options(cmd, o.quiet, o.verbose, o.color);
}

void add_progress_options(CLI::App* cmd, bool& quiet, bool& verbose, std::string& color) {
  cmd->add_flag("-q,--quiet", quiet, "No progress lines on stderr");
  cmd->add_flag("-v,--verbose", verbose,
                "A progress line per call and result, on a terminal too (not one updating line)");
  cmd->add_option("--color", color,
                  "Colour in the progress lines: auto (on a terminal, unless NO_COLOR is set), "
                  "always or never")
      ->type_name("WHEN")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
}

run::ProgressStyle progress_style(bool quiet, bool verbose, const std::string& color) {
  const char* term = std::getenv("TERM");
  const bool terminal =
      ::isatty(STDERR_FILENO) == 1 && (term == nullptr || std::string_view(term) != "dumb");
  const char* no_color = std::getenv("NO_COLOR");
  const bool colour_off = no_color != nullptr && *no_color != '\0';
  run::ProgressStyle s;
  s.enabled = !quiet;
  s.live = terminal && !verbose;
  s.color = color == "always" || (color == "auto" && terminal && !colour_off);
  return s;
}

namespace {

std::pair<std::string, std::string> parse_label(const std::string& given) {
  const auto eq = given.find('=');
  const std::string name = given.substr(0, eq);
  const auto bad = [&](const std::string& why) {
    return InputError(fmt::format("--label '{}': {}", given, why));
  };
  if (eq == std::string::npos) {
    throw bad("expected NAME=VALUE");
  }
  if (name.empty() || name.size() > 64 ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
          std::string::npos) {
    throw bad("the name must be 1 to 64 letters, digits, '_', '.' or '-'");
  }
  const std::string value = given.substr(eq + 1);
  if (value.empty() || value.size() > 256 ||
      std::any_of(value.begin(), value.end(),
                  [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }) ||
      value.find_first_not_of(' ') == std::string::npos) {
    throw bad("the value must be 1 to 256 printable characters, not only spaces");
  }
  if (value.find(", ") != std::string::npos) {
    throw bad("the value must not hold ', ' (a history keeps a run's labels joined by it)");
  }
  return {name, value};
}

}  // namespace

run::RunOptions to_run_options(const ServerCliOptions& o) {
  run::RunOptions ro;
  ro.results_root = o.results;
  ro.server_binary = o.server_bin;
  ro.model = o.models.size() == 1 ? o.models.front() : "";
  ro.url = o.url;
  ro.models_dir = o.models_dir;
  const run::ProgressStyle style = progress_style(o.quiet, o.verbose, o.color);
  ro.progress = style.enabled;
  ro.live_progress = style.live;
  ro.color = style.color;
  ro.ready_timeout = std::chrono::seconds(o.start_timeout_s);
  ro.force = o.force;
  for (const auto& given : o.labels) {
    auto [name, value] = parse_label(given);
    if (!ro.labels.emplace(name, value).second) {
      throw InputError(fmt::format("--label {}: given twice", name));
    }
  }
  return ro;
}

}  // namespace kvbench::cli
