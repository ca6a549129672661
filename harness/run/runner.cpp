#include "harness/run/runner.h"

#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "harness/backend/llama_server.h"
#include "harness/backend/managed_server.h"
#include "harness/core/error.h"
#include "harness/core/version.h"
#include "harness/http/curl_transport.h"
#include "harness/measure/machine.h"
#include "harness/measure/proc_tree.h"
#include "harness/plan/plan.h"
#include "harness/process/run_capture.h"
#include "harness/process/signals.h"
#include "harness/prompt/edit.h"
#include "harness/prompt/prompt.h"
#include "harness/run/model_files.h"
#include "harness/run/pair_prompt.h"
#include "harness/run/progress.h"
#include "harness/run/results.h"
#include <unistd.h>

namespace kvbench::run {

namespace fs = std::filesystem;
using nlohmann::json;

scenario::Scenario with_overrides(scenario::Scenario s, const RunOptions& o) {
  if (!o.url.empty()) {
    s.server.url = o.url;
  }
  if (!o.model.empty()) {
    s.server.model = o.model;
  }
  if (!o.server_binary.empty()) {
    s.server.binary = o.server_binary;
  }
  s.resolved = scenario::to_json(s);
  return s;
}

std::string find_llama_server(const std::string& explicit_path) {
  std::vector<std::string> tried;
  auto usable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; };
  if (!explicit_path.empty()) {
    if (auto p = process::find_on_path(explicit_path)) {
      return p->string();
    }
    throw InputError(
        fmt::format("llama-server binary '{}' does not exist or is not executable", explicit_path));
  }
  if (const char* env = std::getenv("KVBENCH_LLAMA_SERVER"); env != nullptr && *env != '\0') {
    if (usable(env)) {
      return env;
    }
    tried.push_back(fmt::format("$KVBENCH_LLAMA_SERVER={}", env));
  }
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (; !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    const fs::path candidate = dir / ".deps/llama/bin/llama-server";
    if (usable(candidate)) {
      return candidate.string();
    }
  }
  tried.emplace_back(".deps/llama/bin/llama-server above the kvbench executable");
  if (auto p = process::find_on_path("llama-server")) {
    return p->string();
  }
  tried.emplace_back("llama-server on PATH");
  throw InputError(
      fmt::format("no llama-server found (tried {}); install one with "
                  "scripts/get-llama-server.sh or pass --server-bin",
                  fmt::join(tried, ", ")));
}

namespace {

std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h = (h ^ c) * 1099511628211ULL;
  }
  return h;
}

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

class Runner {
 public:
  Runner(const scenario::Scenario& s, const RunOptions& o)
      : s_(s), o_(o), transport_(clock_), plan_(plan::make_plan(s)) {}

  RunSummary run();

 private:
  void prepare();
  void run_block(const plan::Block& block);
  CallRecord run_call(backend::Backend& be, const plan::PlannedCall& call,
                      const plan::Block& block);
  CallRecord base_record(const plan::PlannedCall& call, const plan::Block& block) const;
  void write_record(const CallRecord& r);
  void save_run_json();

  const scenario::Scenario& s_;
  const RunOptions& o_;
  SteadyClock clock_;
  http::CurlTransport transport_;
  plan::Plan plan_;
  std::string run_id_ = prompt::new_run_id();
  std::string binary_;
  std::string model_path_;
  std::string api_key_;
  fs::path run_dir_;
  json run_json_;
  std::unique_ptr<RecordWriter> writer_;
  std::unique_ptr<Progress> progress_;
  std::optional<Nanos> t0_;
  std::vector<int> slot_ids_;  // token ids the server's slot last read
  PairPrompts pairs_;          // the cold prompt of the pair in progress
  RunSummary summary_;
};

void Runner::prepare() {
  api_key_ = api_key_from(s_.server);
  json server = {{"kind", scenario::to_string(s_.server.kind)},
                 {"mode", s_.server.managed() ? "managed" : "attached"}};
  json model = {{"name", s_.server.model}};
  if (s_.server.managed()) {
    binary_ = find_llama_server(s_.server.binary);
    const fs::path models = o_.models_dir.empty() ? default_models_dir() : o_.models_dir;
    model_path_ = resolve_model(s_.server.model, models);
    const auto version = process::run_capture({binary_, "--version"}, std::chrono::seconds(30));
    server["binary"] = binary_;
    server["version"] = version.stdout_text + version.stderr_text;
    model = describe_model_file(model_path_);
    model["name"] = s_.server.model;
  } else {
    server["url"] = s_.server.url;
    backend::LlamaServerBackend probe(transport_, s_.server.url, api_key_);
    if (!probe.healthy()) {
      throw Error(
          fmt::format("the server at {} is not reachable or not ready (GET /health did "
                      "not answer 200); start it or fix server.url",
                      s_.server.url));
    }
  }
  run_dir_ = create_run_dir(o_.results_root, s_.name);
  const std::string scenario_text = s_.resolved.dump();
  run_json_ = {
      {"kvbench",
       {{"version", kVersion}, {"git_revision", kGitRevision}, {"record_version", kRecordVersion}}},
      {"run_id", run_id_},
      {"status", "running"},
      {"started", utc_now_rfc3339()},
      {"scenario_file", s_.source},
      {"scenario", s_.resolved},
      {"scenario_hash", fmt::format("fnv1a64:{:016x}", fnv1a64(scenario_text))},
      {"plan", plan::to_json(plan_)},
      {"server", server},
      {"model", model},
      {"machine", measure::machine_info()},
      {"blocks", json::array()}};
  save_run_json();
  writer_ = std::make_unique<RecordWriter>(run_dir_ / "calls.jsonl");
  progress_ = std::make_unique<Progress>(plan_.call_count(), o_.progress);
}

void Runner::save_run_json() {
  write_json_atomic(run_dir_ / "run.json", run_json_);
}

CallRecord Runner::base_record(const plan::PlannedCall& call, const plan::Block& block) const {
  CallRecord r;
  r.run_id = run_id_;
  r.seq = call.seq;
  r.block = block.index;
  r.round = call.round;
  r.kind = std::string(plan::to_string(call.kind));
  r.prompt_tokens = call.prompt_tokens;
  r.num_ctx = block.config.num_ctx;
  r.cache_type = block.config.cache_type;
  r.wall_start = utc_now_rfc3339();
  return r;
}

void Runner::write_record(const CallRecord& r) {
  writer_->append(r);
  ++summary_.calls;
  summary_.failed += r.ok() ? 0 : 1;
  summary_.flagged += r.flags.empty() ? 0 : 1;
  progress_->call_done(r);
}

CallRecord Runner::run_call(backend::Backend& be, const plan::PlannedCall& call,
                            const plan::Block& block) {
  CallRecord r = base_record(call, block);
  r.nonce = s_.unique_first_line ? prompt::nonce_line(run_id_, call.seq)
                                 : fmt::format("kvbench prompt of {} tokens", call.prompt_tokens);
  const std::uint64_t filler_seed =
      s_.seed * 1000003ULL + static_cast<std::uint64_t>(call.prompt_tokens);
  prompt::Built built;
  std::vector<int> ids;
  int first_line_tokens = 0;
  bool same_count = true;
  try {
    if (call.edit) {
      const auto unix_s = std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch());
      auto p = pairs_.next(call, r, r.nonce, filler_seed, unix_s.count(), be);
      built = std::move(p.built);
      ids = std::move(p.ids);
      same_count = p.same_count;
    } else {
      built = prompt::build_prompt(call.prompt_tokens, r.nonce, filler_seed,
                                   [&](std::string_view t) { return be.count_tokens(t); });
      ids = be.tokenize(built.text);
    }
    first_line_tokens = be.count_tokens(r.nonce + "\n");
  } catch (const Error& e) {
    r.outcome = "tokenize_error";
    r.error = e.what();
    return r;
  }
  r.prompt_tokens_counted = static_cast<int>(ids.size());
  // llama-server reuses the longest common prefix with what its slot holds, but always
  // re-reads at least one token.
  r.expected_cache_n = prompt::expected_reuse(ids, slot_ids_);
  backend::CompletionSpec spec;
  spec.prompt = built.text;
  spec.max_tokens = s_.max_tokens;
  spec.seed = s_.seed;
  spec.timeout = std::chrono::milliseconds(static_cast<long long>(s_.timeout_s * 1000));
  const Nanos now = clock_.now();
  if (!t0_) {
    t0_ = now;
  }
  r.t_start_s = std::chrono::duration<double>(now - *t0_).count();
  auto res = be.complete(spec);
  slot_ids_ = ids;
  r.client = derive_timing(res.trace);
  r.server = std::move(res.server);
  r.outcome = res.outcome;
  r.http_status = res.http_status;
  r.error = res.error;
  if (!built.exact) {
    r.flags.emplace_back("prompt_length_inexact");
  }
  if (!same_count) {
    r.flags.emplace_back("edit_changed_token_count");
  }
  if (r.server.cache_n && *r.server.cache_n > *r.expected_cache_n) {
    r.flags.emplace_back("unexpected_cache_reuse");
  }
  // An edited resend reuses its cold read on purpose; every other timed call must read cold.
  if (call.kind == plan::CallKind::timed && call.role != plan::PairRole::edited &&
      r.server.cache_n && *r.server.cache_n >= first_line_tokens) {
    r.flags.emplace_back("prompt_cache_hit");
  }
  return r;
}

void Runner::run_block(const plan::Block& block) {
  json info = {{"index", block.index},
               {"replica", block.replica},
               {"num_ctx", block.config.num_ctx},
               {"cache_type", block.config.cache_type}};
  std::unique_ptr<backend::ManagedServer> managed;
  std::string url = s_.server.url;
  if (s_.server.managed()) {
    backend::LlamaServerLaunch launch{binary_,
                                      model_path_,
                                      block.config.num_ctx,
                                      block.config.cache_type,
                                      s_.server.flash_attn,
                                      s_.server.threads,
                                      1,
                                      s_.server.args,
                                      run_dir_ / fmt::format("server-block{}.log", block.index),
                                      api_key_};
    info["log"] = launch.log_path.filename().string();
    try {
      managed = backend::ManagedServer::start(launch, transport_, o_.ready_timeout);
      url = managed->url();
      info["argv"] = managed->argv();
      info["pid"] = managed->pid();
    } catch (const Error& e) {
      info["error"] = e.what();
      progress_->note(fmt::format("block {}: the server did not start: {}", block.index, e.what()));
      for (const auto& call : block.calls) {
        CallRecord r = base_record(call, block);
        r.outcome = "server_start_error";
        r.error = e.what();
        write_record(r);
      }
      run_json_["blocks"].push_back(info);
      save_run_json();
      return;
    }
  }
  backend::LlamaServerBackend be(transport_, url, api_key_);
  info["url"] = url;
  info["props"] = be.describe();
  if (managed) {
    if (auto m = measure::read_tree_memory(managed->pid())) {
      info["memory_after_load"] = *m;
    }
  }
  slot_ids_.clear();
  for (const auto& call : block.calls) {
    if (process::stop_requested()) {
      break;
    }
    progress_->call_started(call, block);
    write_record(run_call(be, call, block));
  }
  if (managed) {
    if (auto m = measure::read_tree_memory(managed->pid())) {
      info["memory_at_end"] = *m;
    }
    managed->stop();
  }
  run_json_["blocks"].push_back(info);
  save_run_json();
}

RunSummary Runner::run() {
  prepare();
  summary_.run_dir = run_dir_;
  for (const auto& block : plan_.blocks) {
    if (process::stop_requested()) {
      break;
    }
    run_block(block);
  }
  summary_.complete =
      !process::stop_requested() && summary_.calls == static_cast<int>(plan_.call_count());
  run_json_["status"] = summary_.complete ? "complete" : "incomplete";
  run_json_["finished"] = utc_now_rfc3339();
  run_json_["summary"] = {
      {"calls", summary_.calls}, {"failed", summary_.failed}, {"flagged", summary_.flagged}};
  save_run_json();
  return summary_;
}

}  // namespace

RunSummary run_scenario(const scenario::Scenario& s, const RunOptions& options) {
  Runner runner(s, options);
  return runner.run();
}

}  // namespace kvbench::run
