#include "harness/run/runner.h"

#include <algorithm>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/text.h"
#include "harness/core/url.h"
#include "harness/core/version.h"
#include "harness/measure/machine.h"
#include "harness/measure/machine_state.h"
#include "harness/plan/plan.h"
#include "harness/process/signals.h"
#include "harness/prompt/edit.h"
#include "harness/prompt/prompt.h"
#include "harness/results/results.h"
#include "harness/run/call_records.h"
#include "harness/run/concurrent_block.h"
#include "harness/run/conversation_streams.h"
#include "harness/run/conversation_turns.h"
#include "harness/run/precision.h"
#include "harness/run/progress.h"

namespace kvbench::run {

namespace fs = std::filesystem;
using nlohmann::json;

scenario::Scenario with_overrides(scenario::Scenario s, const RunOptions& o) {
  if (url_has_credentials(o.url)) {
    throw InputError(
        "--url: a URL with credentials in it (user:password@) is refused: put the key in an "
        "environment variable and name it with server.api_key_env");
  }
  if (!o.url.empty() && o.url.rfind("http://", 0) != 0 && o.url.rfind("https://", 0) != 0) {
    throw InputError(
        fmt::format("--url: '{}' is not an http:// or https:// URL", url_for_display(o.url)));
  }
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

namespace {

constexpr int kMaxRestarts = 3;  // per block

// What an interrupted run already holds.
struct ResumeState {
  fs::path run_dir;
  results::RunManifest run;
  std::set<int> done;
  std::vector<CallRecord> recorded;  // the calls recorded, for conversations to continue from
};

class Runner {
 public:
  Runner(const scenario::Scenario& s, const RunOptions& o, RunContext& ctx,
         std::optional<ResumeState> resume = {})
      : s_(s), o_(o), ctx_(ctx), plan_(plan::make_plan(s)), resume_(std::move(resume)) {}

  RunSummary run();

 private:
  void prepare();
  void start_run(const SessionInfo& found);
  void continue_run(const SessionInfo& found);
  void run_block(const plan::Block& block);
  void run_calls(BlockServer& server, const plan::Block& block, results::BlockInfo& info);
  void run_concurrent(backend::Backend& be, const plan::Block& block, results::BlockInfo& info);
  // Runs block.calls[from, to), one set of conversations, all in flight at once; returns whether
  // a turn failed.
  bool run_set_at_once(BlockServer& server, const plan::Block& block, std::size_t from,
                       std::size_t to);
  // After a failed call (the last of seq `after_seq`): when the server died, restarts it
  // (bounded) and returns true, or gives up and fails block.calls[rest_from...]. A server that
  // did not die: true.
  bool recover(BlockServer& server, const plan::Block& block, results::BlockInfo& info,
               int& restarts, int after_seq, std::size_t rest_from);
  // The answers experiment for `block` (scenario "answers"): from its server, or a second start.
  void run_answers(BlockServer& server, const plan::Block& block, bool second_start);
  void fail_rest_of_block(const plan::Block& block, std::size_t from, Outcome outcome,
                          const std::string& error);
  CallRecord run_call(backend::Backend& be, const plan::PlannedCall& call,
                      const plan::Block& block);
  CallRecord run_turn(backend::Backend& be, const plan::PlannedCall& call,
                      const plan::Block& block);
  double elapsed_s(Nanos now);
  void write_record(const CallRecord& r);
  void save_run_json();
  bool done(int seq) const { return done_.count(seq) != 0; }

  const scenario::Scenario& s_;
  // This machine's CPU clock before a call, where it is the server's too (not attached).
  std::optional<double> cpu_clock() const {
    return ctx_.cpu_clock && s_.server.url.empty() ? ctx_.cpu_clock() : std::nullopt;
  }
  const RunOptions& o_;
  RunContext& ctx_;
  plan::Plan plan_;
  std::string run_id_ = prompt::new_run_id();
  std::unique_ptr<ServerSession> session_;
  fs::path run_dir_;
  results::RunManifest run_json_;
  std::unique_ptr<results::RecordWriter> writer_;
  std::unique_ptr<results::RecordWriter> answers_writer_;  // answers.jsonl, opened at first use
  std::vector<std::string> answer_prompts_;                // the same text in every block
  std::unique_ptr<Progress> progress_;
  std::optional<Nanos> t0_;
  std::vector<int> slot_ids_;  // token ids the server's slot last read
  std::set<int> done_;         // calls already recorded (when resuming)
  std::optional<ResumeState> resume_;
  CallRecords calls_{s_, ctx_.wall_clock};
  ConversationTurns turns_{s_};
  RunSummary summary_;
};

void Runner::prepare() {
  session_ = ctx_.session(s_, o_, ctx_.transport, run_id_);
  const SessionInfo found = session_->prepare();
  if (resume_) {
    continue_run(found);
  } else {
    start_run(found);
  }
}

void Runner::start_run(const SessionInfo& found) {
  calls_.set_run_id(run_id_);
  turns_.set_run_id(run_id_);
  run_dir_ = results::create_run_dir(o_.results_root, s_.name);
  const std::string scenario_text = s_.resolved.dump();
  results::RunManifest& m = run_json_;
  m.kvbench = {kVersion, kGitRevision, kRecordVersion};
  m.run_id = run_id_;
  m.status = "running";
  m.started = utc_now_rfc3339();
  m.scenario_file = s_.source;
  m.scenario = s_.resolved;
  m.scenario_hash = fmt::format("fnv1a64:{:016x}", fnv1a64(scenario_text));
  m.plan = plan::to_json(plan_);
  m.server = found.server;
  m.model = found.model;
  m.machine = measure::machine_info();
  m.labels = o_.labels;
  if (!s_.variants.empty()) {
    // The resolved server spec of each variant, with what preparing it found.
    m.variants = s_.resolved.value("variants", json::array());
    for (std::size_t i = 0; i < m.variants.size() && i < found.variants_found.size(); ++i) {
      m.variants[i]["found"] = found.variants_found[i];
    }
  }
  save_run_json();
  writer_ = std::make_unique<results::RecordWriter>(run_dir_ / "calls.jsonl");
  progress_ = std::make_unique<Progress>(plan_.call_count(),
                                         ProgressStyle{o_.progress, o_.live_progress, o_.color});
}

void Runner::continue_run(const SessionInfo& found) {
  run_dir_ = resume_->run_dir;
  run_json_ = resume_->run;
  if (run_json_.plan != plan::to_json(plan_)) {
    throw InputError(
        fmt::format("{}: the plan in run.json does not match its scenario: this run "
                    "cannot be resumed",
                    run_dir_.string()));
  }
  if (!run_json_.run_id.empty()) {
    run_id_ = run_json_.run_id;
  }
  calls_.set_run_id(run_id_);
  turns_.set_run_id(run_id_);
  turns_.restore(resume_->recorded);
  done_ = resume_->done;
  run_json_.status = "running";
  run_json_.resumed.push_back({{"at", utc_now_rfc3339()},
                               {"calls_recorded", done_.size()},
                               {"server", found.server},
                               {"model", found.model}});
  save_run_json();
  results::cut_partial_last_line(run_dir_ / "calls.jsonl");
  writer_ = std::make_unique<results::RecordWriter>(run_dir_ / "calls.jsonl");
  progress_ = std::make_unique<Progress>(plan_.call_count() - done_.size(),
                                         ProgressStyle{o_.progress, o_.live_progress, o_.color});
}

void Runner::save_run_json() {
  results::write_json_atomic(run_dir_ / "run.json", json(run_json_));
}

// In a concurrent block this runs on the block's writer thread while the driver thread only
// sends and reads: summary_ and progress_ are touched by no other thread until the block ends.
void Runner::write_record(const CallRecord& r) {
  try {
    writer_->append(r);
  } catch (const Error& e) {  // the disk is full, or failing: nothing more can be kept
    throw Error(fmt::format("{}; once there is room, `kvbench run --resume {}` runs the rest",
                            e.what(), run_dir_.string()));
  }
  ++summary_.calls;
  summary_.failed += r.ok() ? 0 : 1;
  summary_.flagged += r.flags.empty() ? 0 : 1;
  progress_->call_done(r);
}

double Runner::elapsed_s(Nanos now) {
  if (!t0_) {
    // Elapsed time counts from the run's first call, across a resume too.
    const double epoch_now = std::chrono::duration<double>(ctx_.wall_clock.now()).count();
    if (!run_json_.first_call_epoch_s) {
      run_json_.first_call_epoch_s = epoch_now;
    }
    const double since_first = epoch_now - *run_json_.first_call_epoch_s;
    t0_ = now - std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(since_first));
  }
  return std::chrono::duration<double>(now - *t0_).count();
}

CallRecord Runner::run_call(backend::Backend& be, const plan::PlannedCall& call,
                            const plan::Block& block) {
  if (call.turn) {
    return run_turn(be, call, block);
  }
  PreparedCall p = calls_.prepare(be, call, block);
  if (!p.ready) {
    return p.record;
  }
  // A slot's reuse is the longest common prefix with what it read last, less the one token a
  // server always re-reads, in the server's cache rule (see predicted_reuse).
  p.record.expected_cache_n = predicted_reuse(p, be.capabilities().token_ids, &slot_ids_);
  p.record.cpu_mhz = cpu_clock();
  p.record.t_start_s = elapsed_s(ctx_.clock.now());
  auto res = be.complete(p.spec);
  slot_ids_ = p.ids;
  turns_.slot_read(p.spec.slot, p.ids);
  calls_.finish(p, std::move(res));
  return p.record;
}

CallRecord Runner::run_turn(backend::Backend& be, const plan::PlannedCall& call,
                            const plan::Block& block) {
  PreparedCall p = turns_.prepare(calls_, be, call, block);
  if (!p.ready) {
    return p.record;
  }
  // Think time: the conversation's next message comes no sooner than this after its answer.
  for (double wait = turns_.wait_s(call, block, ctx_.clock.now());
       wait > 0 && !process::stop_requested();
       wait = turns_.wait_s(call, block, ctx_.clock.now())) {
    const double step = std::min(wait, 0.1);
    if (ctx_.sleep) {
      ctx_.sleep(step);
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(step));
    }
  }
  if (process::stop_requested()) {  // Ctrl-C while it waited: not sent, --resume sends it
    p.record.outcome = Outcome::aborted;
    p.record.error = std::string(http::kInterruptedError);
    return p.record;
  }
  p.record.wall_start = utc_now_rfc3339();
  p.record.cpu_mhz = cpu_clock();
  p.record.t_start_s = elapsed_s(ctx_.clock.now());
  auto res = be.complete(p.spec);
  turns_.answered(p, res);
  calls_.finish(p, std::move(res));
  ConversationTurns::flag(p.record);
  return p.record;
}

void Runner::fail_rest_of_block(const plan::Block& block, std::size_t from, Outcome outcome,
                                const std::string& error) {
  for (std::size_t i = from; i < block.calls.size(); ++i) {
    if (done(block.calls[i].seq)) {
      continue;
    }
    CallRecord r = calls_.base(block.calls[i], block);
    r.outcome = outcome;
    r.error = error;
    write_record(r);
  }
}

void Runner::run_block(const plan::Block& block) {
  results::BlockInfo info;
  info.index = block.index;
  info.replica = block.replica;
  info.num_ctx = block.config.num_ctx;
  info.cache_type = block.config.cache_type;
  info.variant = block.config.variant;
  if (block.config.slots != 1) {
    info.slots = block.config.slots;
  }
  std::optional<measure::MachineState> state_at_start;
  if (ctx_.machine_state) {
    state_at_start = ctx_.machine_state();
  }
  std::unique_ptr<BlockServer> server;
  try {
    server = session_->open(block, run_dir_, info);
  } catch (const Error& e) {
    info.error = e.what();
    progress_->note(fmt::format("block {}: the server did not start: {}", block.index, e.what()));
    if (!process::stop_requested()) {  // interrupted: its calls stay for --resume
      fail_rest_of_block(block, 0, Outcome::server_start_error, e.what());
    }
  }
  if (server) {
    slot_ids_ = server->slot_ids();
    turns_.reset_slots(slot_ids_);
    if (s_.concurrency.active()) {
      run_concurrent(server->backend(), block, info);
    } else {
      run_calls(*server, block, info);
    }
    if (s_.answers.active() && !process::stop_requested()) {
      run_answers(*server, block, false);
    }
    server->close(info);
    if (s_.answers.active() && block.config.cache_type == s_.answers.reference &&
        !process::stop_requested()) {
      run_answers(*server, block, true);
    }
  }
  if (state_at_start) {
    info.detail["machine_state"] = measure::block_machine_state(
        *state_at_start, ctx_.machine_state(), run_json_.machine.value("usable_cores", 0));
  }
  run_json_.blocks.push_back(std::move(info));
  save_run_json();
}

void Runner::run_answers(BlockServer& server, const plan::Block& block, bool second_start) {
  if (answer_prompts_.empty() && !s_.answers.texts.empty()) {
    answer_prompts_ = s_.answers.texts;  // the user's own prompts, as they are
  }
  if (answer_prompts_.empty()) {
    try {
      for (int i = 0; i < s_.answers.prompts; ++i) {
        const std::string first =
            fmt::format("kvbench answer prompt {} of {}", i + 1, s_.answers.prompts);
        answer_prompts_.push_back(
            prompt::build_prompt(
                s_.answers.prompt_tokens, first,
                s_.seed * std::uint64_t{7919} + static_cast<std::uint64_t>(i),
                [&](std::string_view t) { return server.backend().count_tokens(t); })
                .text);
      }
    } catch (const Error& e) {
      answer_prompts_.clear();
      progress_->note(fmt::format("block {}: the answer prompts could not be built: {}",
                                  block.index, e.what()));
      return;
    }
  }
  progress_->note(fmt::format("block {}: {} answers{}", block.index, answer_prompts_.size(),
                              second_start ? " from a second start (the control)" : ""));
  const backend::AnswerSpec spec{s_.answers.tokens, s_.answers.top_k, s_.seed};
  const auto answers = server.answers(answer_prompts_, spec, second_start);
  if (answers.empty()) {
    return;
  }
  if (!answers_writer_) {
    answers_writer_ = std::make_unique<results::RecordWriter>(run_dir_ / "answers.jsonl");
  }
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const auto& a = answers[i];
    json line = {{"block", block.index},
                 {"replica", block.replica},
                 {"start", second_start ? 2 : 1},
                 {"cache_type", block.config.cache_type},
                 {"num_ctx", block.config.num_ctx},
                 {"variant", block.config.variant},
                 {"prompt", i}};
    if (!a.ok()) {
      line["error"] = a.error;
    } else if (a.text_only) {
      line["text"] = a.text;
    } else {
      json top = json::array();
      for (const auto& position : a.top) {
        json entries = json::array();
        for (const auto& [id, logprob] : position) {
          entries.push_back({id, logprob});
        }
        top.push_back(std::move(entries));
      }
      line["ids"] = a.ids;
      line["top"] = std::move(top);
    }
    answers_writer_->append_json(line);
  }
}

void Runner::run_calls(BlockServer& server, const plan::Block& block, results::BlockInfo& info) {
  int restarts = 0;
  for (std::size_t i = 0; i < block.calls.size(); ++i) {
    const auto& call = block.calls[i];
    if (done(call.seq)) {
      continue;
    }
    if (process::stop_requested()) {
      break;
    }
    if (call.turn && s_.conversation.concurrent) {
      std::size_t end = i;
      while (end < block.calls.size() && block.calls[end].turn &&
             block.calls[end].turn->set == call.turn->set) {
        ++end;
      }
      const bool failed = run_set_at_once(server, block, i, end);
      i = end - 1;
      if (failed && !recover(server, block, info, restarts, block.calls[i].seq, end)) {
        break;
      }
      continue;
    }
    progress_->call_started(call, block);
    const CallRecord r = run_call(server.backend(), call, block);
    write_record(r);
    server.after_call(call);
    if (!r.ok() && !recover(server, block, info, restarts, call.seq, i + 1)) {
      break;
    }
  }
}

bool Runner::recover(BlockServer& server, const plan::Block& block, results::BlockInfo& info,
                     int& restarts, int after_seq, std::size_t rest_from) {
  results::ServerRestart restart;
  restart.after_seq = after_seq;
  if (!server.died(restart)) {
    return true;
  }
  // The server died: restart it (bounded), or give the rest of the block up.
  if (++restarts <= kMaxRestarts && server.restart(restart)) {
    slot_ids_.clear();
    turns_.reset_slots();
    info.restarts.push_back(restart);
    progress_->note(
        fmt::format("block {}: the server died ({}); restarted", block.index, restart.exit));
    return true;
  }
  restart.gave_up = true;
  info.restarts.push_back(restart);
  fail_rest_of_block(
      block, rest_from, Outcome::server_died,
      fmt::format("the server died and {} restarts did not bring it back", kMaxRestarts));
  return false;
}

bool Runner::run_set_at_once(BlockServer& server, const plan::Block& block, std::size_t from,
                             std::size_t to) {
  std::vector<plan::PlannedCall> turns;
  for (std::size_t i = from; i < to; ++i) {
    if (!done(block.calls[i].seq)) {
      turns.push_back(block.calls[i]);
    }
  }
  if (turns.empty()) {
    return false;
  }
  backend::Backend& be = server.backend();
  const backend::Capabilities caps = be.capabilities();
  bool failed = false;
  ConversationSetHooks hooks;
  hooks.prepare = [&](const plan::PlannedCall& c) { return turns_.prepare(calls_, be, c, block); };
  hooks.wait_s = [&](const plan::PlannedCall& c, Nanos now) {
    return turns_.wait_s(c, block, now);
  };
  hooks.expect = [&](PreparedCall& p) { turns_.expect(p, caps); };
  hooks.finish = [&](PreparedCall& p, backend::CallResult res) {
    turns_.answered(p, res);
    calls_.finish(p, std::move(res));
    ConversationTurns::flag(p.record);
  };
  hooks.write = [&](const CallRecord& r) {
    failed = failed || !r.ok();
    write_record(r);
  };
  hooks.elapsed_s = [&](Nanos now) { return elapsed_s(now); };
  hooks.sleep = ctx_.sleep;
  const auto transport = ctx_.concurrent_transport();
  run_conversation_set(turns, s_.conversation.slots, caps.slot_pinning, be, *transport, ctx_.clock,
                       hooks);
  server.after_call(turns.back());
  return failed;
}

void Runner::run_concurrent(backend::Backend& be, const plan::Block& block,
                            results::BlockInfo& info) {
  ConcurrentHooks hooks;
  hooks.prepare = [&](const plan::PlannedCall& call) { return calls_.prepare(be, call, block); };
  hooks.elapsed_s = [&](Nanos now) { return elapsed_s(now); };
  hooks.finish = [&](PreparedCall& p, backend::CallResult res) {
    calls_.finish(p, std::move(res));
  };
  hooks.write = [&](const CallRecord& r) { write_record(r); };
  hooks.skip = [&](int seq) { return done(seq); };
  hooks.slot0_ids = slot_ids_;
  const auto transport = ctx_.concurrent_transport();
  run_concurrent_block(block, s_.concurrency, s_.seed, be, *transport, ctx_.clock, hooks, info);
}

RunSummary Runner::run() {
  prepare();
  summary_.run_dir = run_dir_;
  for (const auto& block : plan_.blocks) {
    if (process::stop_requested()) {
      break;
    }
    if (!std::all_of(block.calls.begin(), block.calls.end(),
                     [&](const auto& c) { return done(c.seq); })) {
      run_block(block);
    }
  }
  summary_.complete = !process::stop_requested() &&
                      done_.size() + static_cast<std::size_t>(summary_.calls) == plan_.call_count();
  run_json_.status = summary_.complete ? "complete" : "incomplete";
  run_json_.finished = utc_now_rfc3339();
  run_json_.summary = {
      {"calls", summary_.calls}, {"failed", summary_.failed}, {"flagged", summary_.flagged}};
  save_run_json();
  return summary_;
}

}  // namespace

RunSummary run_scenario(const scenario::Scenario& s, const RunOptions& options, RunContext& ctx) {
  Runner runner(s, options, ctx);
  return until_precise(s, runner.run(), options, ctx);
}

RunSummary resume_run(const fs::path& run_dir, const RunOptions& options, RunContext& ctx) {
  RunSummary summary = resume_run_once(run_dir, options, ctx);
  const auto run = results::load_run(run_dir).run;
  const auto s = scenario::parse_scenario(run.scenario.dump(), (run_dir / "run.json").string());
  return until_precise(s, std::move(summary), options, ctx);
}

RunSummary resume_run_once(const fs::path& run_dir, const RunOptions& options, RunContext& ctx) {
  ResumeState state;
  state.run_dir = run_dir;
  const results::LoadedRun loaded = results::load_run(run_dir);
  state.run = loaded.run;
  for (const auto& r : loaded.calls) {
    if (r.outcome != Outcome::aborted) {  // an interrupted call is repeated
      state.done.insert(r.seq);
    }
    state.recorded.push_back(r);
  }
  if (state.run.scenario.empty()) {
    throw InputError(fmt::format("{}: run.json has no scenario", run_dir.string()));
  }
  const auto s = with_overrides(
      scenario::parse_scenario(state.run.scenario.dump(), (run_dir / "run.json").string()),
      options);
  Runner runner(s, options, ctx, std::move(state));
  return runner.run();
}

}  // namespace kvbench::run
