#include "harness/run/runner.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>

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
#include "harness/run/block_memory.h"
#include "harness/run/concurrent_block.h"
#include "harness/run/model_files.h"
#include "harness/run/ollama_session.h"
#include "harness/run/pair_prompt.h"
#include "harness/run/progress.h"
#include "harness/run/results.h"
#include "harness/run/server_target.h"
#include <unistd.h>

namespace kvbench::run {

namespace fs = std::filesystem;
using nlohmann::json;

scenario::Scenario with_overrides(scenario::Scenario s, const RunOptions& o) {
  // A variant takes an override for a field it does not set itself (one equal to the server's).
  for (auto& v : s.variants) {
    if (!o.url.empty() && v.server.url == s.server.url) {
      v.server.url = o.url;
    }
    if (!o.model.empty() && v.server.model == s.server.model) {
      v.server.model = o.model;
    }
    if (!o.server_binary.empty() && v.server.binary == s.server.binary) {
      v.server.binary = o.server_binary;
    }
  }
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
        fmt::format("server.binary: llama-server binary '{}' does not exist or is not executable",
                    explicit_path));
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

constexpr int kMaxRestarts = 3;  // per block

std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h = (h ^ c) * 1099511628211ULL;
  }
  return h;
}

// The per-slot context a llama-server reports in /props.
int slot_ctx_from(const json& props) {
  const auto it = props.find("default_generation_settings");
  if (it == props.end() || !it->is_object()) {
    return 0;
  }
  return it->value("n_ctx", 0);
}

int longest_prompt_tokens(const plan::Block& block) {
  int n = 0;
  for (const auto& call : block.calls) {
    n = std::max(n, call.prompt_tokens);
  }
  return n;
}

// What an interrupted run already holds.
struct ResumeState {
  fs::path run_dir;
  json run;
  std::set<int> done;
};

class Runner {
 public:
  Runner(const scenario::Scenario& s, const RunOptions& o, std::optional<ResumeState> resume = {})
      : s_(s), o_(o), transport_(clock_), plan_(plan::make_plan(s)), resume_(std::move(resume)) {}

  RunSummary run();

 private:
  void prepare();
  void run_block(const plan::Block& block);
  void fail_rest_of_block(const plan::Block& block, std::size_t from, const std::string& outcome,
                          const std::string& error);
  void run_ollama_block(const plan::Block& block, json info);
  void run_calls(backend::Backend& be, const plan::Block& block);
  void fail_block(const plan::Block& block, json& info, const std::string& what);
  CallRecord run_call(backend::Backend& be, const plan::PlannedCall& call,
                      const plan::Block& block);
  PreparedCall prepare_call(backend::Backend& be, const plan::PlannedCall& call,
                            const plan::Block& block);
  void finish_call(PreparedCall& p, backend::CallResult res);
  double elapsed_s(Nanos now);
  void run_concurrent(const ConcurrentServer& server, backend::Backend& be,
                      const plan::Block& block, json& info);
  CallRecord base_record(const plan::PlannedCall& call, const plan::Block& block) const;
  void write_record(const CallRecord& r);
  void save_run_json();
  json variants_json() const;
  const ServerTarget& target_of(const plan::Block& block) const;
  void continue_run(const json& server, const json& model);

  const scenario::Scenario& s_;
  const RunOptions& o_;
  SteadyClock clock_;
  http::CurlTransport transport_;
  plan::Plan plan_;
  std::string run_id_ = prompt::new_run_id();
  std::vector<ServerTarget> targets_;  // llama-server: one per variant (or the one server)
  fs::path run_dir_;
  json run_json_;
  std::unique_ptr<RecordWriter> writer_;
  std::unique_ptr<Progress> progress_;
  std::optional<Nanos> t0_;
  std::vector<int> slot_ids_;  // token ids the server's slot last read
  std::set<int> done_;         // calls already recorded (when resuming)
  std::optional<ResumeState> resume_;
  std::unique_ptr<OllamaSession> ollama_;
  PairPrompts pairs_;  // the cold prompt of the pair in progress
  RunSummary summary_;
};

void Runner::prepare() {
  json server;
  json model;
  if (s_.server.kind == scenario::ServerKind::ollama) {
    try {
      api_key_from(s_.server);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", s_.source, e.what()));
    }
    server = {{"kind", scenario::to_string(s_.server.kind)},
              {"mode", s_.server.managed() ? "managed" : "attached"}};
    model = {{"name", s_.server.model}};
    ollama_ = std::make_unique<OllamaSession>(s_, transport_, run_id_, o_.ready_timeout);
    ollama_->prepare(server, model);
  } else {
    targets_ = prepare_llama_targets(s_, o_, transport_);
    server = targets_.front().server;
    model = targets_.front().model;
  }
  if (resume_) {
    continue_run(server, model);
    return;
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
  if (!s_.variants.empty()) {
    run_json_["variants"] = variants_json();
  }
  save_run_json();
  writer_ = std::make_unique<RecordWriter>(run_dir_ / "calls.jsonl");
  progress_ = std::make_unique<Progress>(plan_.call_count(), o_.progress);
}

void Runner::continue_run(const json& server, const json& model) {
  run_dir_ = resume_->run_dir;
  run_json_ = resume_->run;
  if (run_json_.value("plan", json()) != plan::to_json(plan_)) {
    throw InputError(
        fmt::format("{}: the plan in run.json does not match its scenario: this run "
                    "cannot be resumed",
                    run_dir_.string()));
  }
  run_id_ = run_json_.value("run_id", run_id_);
  done_ = resume_->done;
  run_json_["status"] = "running";
  run_json_["resumed"].push_back({{"at", utc_now_rfc3339()},
                                  {"calls_recorded", done_.size()},
                                  {"server", server},
                                  {"model", model}});
  save_run_json();
  cut_partial_last_line(run_dir_ / "calls.jsonl");
  writer_ = std::make_unique<RecordWriter>(run_dir_ / "calls.jsonl");
  progress_ = std::make_unique<Progress>(plan_.call_count() - done_.size(), o_.progress);
}

json Runner::variants_json() const {
  // The resolved server spec of each variant, with what preparing it found.
  json out = s_.resolved.value("variants", json::array());
  for (std::size_t i = 0; i < out.size() && i < targets_.size(); ++i) {
    out[i]["found"] = {{"server", targets_[i].server}, {"model", targets_[i].model}};
  }
  return out;
}

const ServerTarget& Runner::target_of(const plan::Block& block) const {
  for (const auto& t : targets_) {
    if (t.variant == block.config.variant) {
      return t;
    }
  }
  throw Error(fmt::format("block {} names variant '{}', which the scenario does not have",
                          block.index, block.config.variant));
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
  r.variant = block.config.variant;
  r.wall_start = utc_now_rfc3339();
  if (s_.concurrency.active()) {
    r.slots = block.config.slots;
  }
  return r;
}

void Runner::write_record(const CallRecord& r) {
  writer_->append(r);
  ++summary_.calls;
  summary_.failed += r.ok() ? 0 : 1;
  summary_.flagged += r.flags.empty() ? 0 : 1;
  progress_->call_done(r);
}

PreparedCall Runner::prepare_call(backend::Backend& be, const plan::PlannedCall& call,
                                  const plan::Block& block) {
  PreparedCall p;
  p.call = call;
  CallRecord& r = p.record;
  r = base_record(call, block);
  r.nonce = s_.unique_first_line ? prompt::nonce_line(run_id_, call.seq)
                                 : fmt::format("kvbench prompt of {} tokens", call.prompt_tokens);
  const std::uint64_t filler_seed =
      s_.seed * 1000003ULL + static_cast<std::uint64_t>(call.prompt_tokens);
  prompt::Built built;
  try {
    if (call.edit) {
      const auto unix_s = std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch());
      auto pair = pairs_.next(call, r, r.nonce, filler_seed, unix_s.count(), be);
      built = std::move(pair.built);
      p.ids = std::move(pair.ids);
      p.same_count = pair.same_count;
    } else {
      built = prompt::build_prompt(call.prompt_tokens, r.nonce, filler_seed,
                                   [&](std::string_view t) { return be.count_tokens(t); });
      p.ids = be.tokenize(built.text);
    }
    p.first_line_tokens = be.count_tokens(r.nonce + "\n");
  } catch (const Error& e) {
    r.outcome = "tokenize_error";
    r.error = e.what();
    return p;
  }
  p.ready = true;
  p.exact = built.exact;
  if (!p.ids.empty()) {
    r.prompt_tokens_counted = static_cast<int>(p.ids.size());
  }
  p.spec.prompt = std::move(built.text);
  p.spec.max_tokens = s_.max_tokens;
  p.spec.seed = s_.seed;
  p.spec.timeout = std::chrono::milliseconds(static_cast<long long>(s_.timeout_s * 1000));
  return p;
}

double Runner::elapsed_s(Nanos now) {
  if (!t0_) {
    // Elapsed time counts from the run's first call, across a resume too.
    const double epoch_now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (!run_json_.contains("first_call_epoch_s")) {
      run_json_["first_call_epoch_s"] = epoch_now;
    }
    const double since_first = epoch_now - run_json_["first_call_epoch_s"].get<double>();
    t0_ = now - std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(since_first));
  }
  return std::chrono::duration<double>(now - *t0_).count();
}

void Runner::finish_call(PreparedCall& p, backend::CallResult res) {
  CallRecord& r = p.record;
  r.client = derive_timing(res.trace);
  r.server = std::move(res.server);
  r.outcome = res.outcome;
  r.http_status = res.http_status;
  r.error = res.error;
  if (!p.exact) {
    r.flags.emplace_back("prompt_length_inexact");
  }
  if (!p.same_count) {
    r.flags.emplace_back("edit_changed_token_count");
  }
  if (r.server.cache_n && r.expected_cache_n && *r.server.cache_n > *r.expected_cache_n) {
    r.flags.emplace_back("unexpected_cache_reuse");
  }
  // An edited resend reuses its cold read on purpose; every other measured call must read cold.
  if (p.call.kind != plan::CallKind::warmup && p.call.role != plan::PairRole::edited &&
      r.server.cache_n && *r.server.cache_n >= p.first_line_tokens) {
    r.flags.emplace_back("prompt_cache_hit");
  }
  pairs_.check_reported_count(p.call, r);
}

CallRecord Runner::run_call(backend::Backend& be, const plan::PlannedCall& call,
                            const plan::Block& block) {
  PreparedCall p = prepare_call(be, call, block);
  if (!p.ready) {
    return p.record;
  }
  // llama-server reuses the longest common prefix with what its slot holds, but always
  // re-reads at least one token. A server without token ids (Ollama) predicts nothing.
  if (!p.ids.empty()) {
    p.record.expected_cache_n = prompt::expected_reuse(p.ids, slot_ids_);
  }
  p.record.t_start_s = elapsed_s(clock_.now());
  auto res = be.complete(p.spec);
  slot_ids_ = p.ids;
  finish_call(p, std::move(res));
  return p.record;
}

void Runner::fail_rest_of_block(const plan::Block& block, std::size_t from,
                                const std::string& outcome, const std::string& error) {
  for (std::size_t i = from; i < block.calls.size(); ++i) {
    if (done_.count(block.calls[i].seq) != 0) {
      continue;
    }
    CallRecord r = base_record(block.calls[i], block);
    r.outcome = outcome;
    r.error = error;
    write_record(r);
  }
}

void Runner::run_block(const plan::Block& block) {
  json info = {{"index", block.index},
               {"replica", block.replica},
               {"num_ctx", block.config.num_ctx},
               {"cache_type", block.config.cache_type}};
  if (!block.config.variant.empty()) {
    info["variant"] = block.config.variant;
  }
  if (ollama_) {
    run_ollama_block(block, std::move(info));
    return;
  }
  std::unique_ptr<backend::ManagedServer> managed;
  const ServerTarget& target = target_of(block);
  const std::string& api_key = target.api_key;
  std::string url = target.spec.url;
  backend::LlamaServerLaunch launch;
  if (target.spec.managed()) {
    launch = backend::LlamaServerLaunch{target.binary,
                                        target.model_path,
                                        block.config.num_ctx * block.config.slots,
                                        block.config.cache_type,
                                        target.spec.flash_attn,
                                        target.spec.threads,
                                        block.config.slots,
                                        target.spec.args,
                                        run_dir_ / fmt::format("server-block{}.log", block.index),
                                        api_key};
    info["log"] = launch.log_path.filename().string();
    try {
      managed = backend::ManagedServer::start(launch, transport_, o_.ready_timeout);
      url = managed->url();
      info["argv"] = managed->argv();
      info["pid"] = managed->pid();
    } catch (const Error& e) {
      fail_block(block, info, e.what());
      return;
    }
  }
  info["url"] = url;
  info["props"] = backend::LlamaServerBackend(transport_, url, api_key).describe();
  slot_ids_.clear();
  std::optional<BlockMemory> memory;
  if (managed) {
    memory.emplace(managed->pid(), longest_prompt_tokens(block));
    std::string note;
    backend::LlamaServerBackend be(transport_, url, api_key);
    slot_ids_ = one_token_request(be, note);
    if (!note.empty()) {
      memory->add_note(note);
    }
    memory->after_load();
  }
  auto backend = std::make_unique<backend::LlamaServerBackend>(transport_, url, api_key);
  if (s_.concurrency.active()) {
    info["slot_ctx"] = slot_ctx_from(info["props"]);
    run_concurrent(llama_server_calls(*backend), *backend, block, info);
  }
  int restarts = 0;
  for (std::size_t i = 0; i < block.calls.size() && !s_.concurrency.active(); ++i) {
    const auto& call = block.calls[i];
    if (done_.count(call.seq) != 0) {
      continue;
    }
    if (process::stop_requested()) {
      break;
    }
    progress_->call_started(call, block);
    const CallRecord r = run_call(*backend, call, block);
    write_record(r);
    if (memory) {
      memory->after_call(call.prompt_tokens);
    }
    if (r.ok() || !managed || managed->running()) {
      continue;
    }
    // The managed server died: restart it (bounded), or give the rest of the block up.
    json restart = {
        {"after_seq", call.seq}, {"exit", managed->exit_description()}, {"at", utc_now_rfc3339()}};
    memory.reset();
    info["memory_notes"].push_back("the server restarted: memory figures were dropped");
    if (++restarts <= kMaxRestarts) {
      try {
        managed = backend::ManagedServer::start(launch, transport_, o_.ready_timeout);
        backend =
            std::make_unique<backend::LlamaServerBackend>(transport_, managed->url(), api_key);
        slot_ids_.clear();
        restart["url"] = managed->url();
        info["restarts"].push_back(restart);
        progress_->note(fmt::format("block {}: the server died ({}); restarted", block.index,
                                    restart["exit"].get<std::string>()));
        continue;
      } catch (const Error& e) {
        restart["error"] = e.what();
      }
    }
    restart["gave_up"] = true;
    info["restarts"].push_back(restart);
    fail_rest_of_block(
        block, i + 1, "server_died",
        fmt::format("the server died and {} restarts did not bring it back", kMaxRestarts));
    break;
  }
  if (managed) {
    if (memory) {
      memory->at_end();
    }
    managed->stop();
    if (memory) {
      memory->write(info, run_dir_ / info["log"].get<std::string>());
    }
  }
  run_json_["blocks"].push_back(info);
  save_run_json();
}

void Runner::run_concurrent(const ConcurrentServer& server, backend::Backend& be,
                            const plan::Block& block, json& info) {
  ConcurrentHooks hooks;
  hooks.prepare = [&](const plan::PlannedCall& call) { return prepare_call(be, call, block); };
  hooks.elapsed_s = [&](Nanos now) { return elapsed_s(now); };
  hooks.finish = [&](PreparedCall& p, backend::CallResult res) { finish_call(p, std::move(res)); };
  hooks.write = [&](const CallRecord& r) { write_record(r); };
  hooks.skip = [&](int seq) { return done_.count(seq) != 0; };
  hooks.slot0_ids = slot_ids_;
  run_concurrent_block(block, s_.concurrency, s_.seed, server, clock_, hooks, info);
}

void Runner::run_calls(backend::Backend& be, const plan::Block& block) {
  slot_ids_.clear();
  for (const auto& call : block.calls) {
    if (done_.count(call.seq) != 0) {
      continue;
    }
    if (process::stop_requested()) {
      break;
    }
    progress_->call_started(call, block);
    write_record(run_call(be, call, block));
  }
}

void Runner::fail_block(const plan::Block& block, json& info, const std::string& what) {
  info["error"] = what;
  progress_->note(fmt::format("block {}: the server did not start: {}", block.index, what));
  fail_rest_of_block(block, 0, "server_start_error", what);
  run_json_["blocks"].push_back(info);
  save_run_json();
}

void Runner::run_ollama_block(const plan::Block& block, json info) {
  backend::OllamaBackend* be = nullptr;
  try {
    be = &ollama_->open_block(block, run_dir_, info);
  } catch (const Error& e) {
    ollama_->close_block(info);
    fail_block(block, info, e.what());
    return;
  }
  if (s_.concurrency.active()) {
    run_concurrent(ollama_calls(*be), *be, block, info);
  } else {
    run_calls(*be, block);
  }
  ollama_->close_block(info);
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
    const bool all_done = std::all_of(block.calls.begin(), block.calls.end(),
                                      [&](const auto& c) { return done_.count(c.seq) != 0; });
    if (!all_done) {
      run_block(block);
    }
  }
  summary_.complete = !process::stop_requested() &&
                      done_.size() + static_cast<std::size_t>(summary_.calls) == plan_.call_count();
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

RunSummary resume_run(const fs::path& run_dir, const RunOptions& options) {
  ResumeState state;
  state.run_dir = run_dir;
  const LoadedRun loaded = load_run(run_dir);
  state.run = loaded.run;
  for (const auto& r : loaded.calls) {
    state.done.insert(r.seq);
  }
  if (!state.run.contains("scenario")) {
    throw InputError(fmt::format("{}: run.json has no scenario", run_dir.string()));
  }
  const auto s = with_overrides(
      scenario::parse_scenario(state.run["scenario"].dump(), (run_dir / "run.json").string()),
      options);
  Runner runner(s, options, std::move(state));
  return runner.run();
}

}  // namespace kvbench::run
