#include "harness/workloads/trace/source.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/scenario/llama_defaults.h"
#include "harness/workloads/trace/planned.h"
#include "harness/workloads/trace/source_prompt.h"

namespace kvbench::run {

namespace {

namespace tr = workloads::trace;

// The managed llama-server's cache settings for a block: its slots, and its argv's
// --slot-prompt-similarity and --cache-ram (as scenario/llama_defaults.h states them where
// server.args does not set them).
tr::CacheSettings cache_settings(const scenario::Scenario& s, const plan::ServerConfig& config) {
  namespace llama = scenario::llama;
  tr::CacheSettings c;
  c.slots = config.slots;
  c.host_mib = llama::kCacheRamMib;
  c.similarity = llama::kSlotPromptSimilarity;
  const scenario::ServerSpec* server = &s.server;
  for (const auto& v : s.variants) {
    if (v.name == config.variant) {
      server = &v.server;
    }
  }
  c.state_bytes_per_token = TraceSource::state_bytes_per_token(server->model, config.cache_type);
  try {
    if (const auto mib = llama::flag_value(server->args, llama::kCacheRamFlag)) {
      c.host_mib = std::stoll(*mib);
    }
    if (const auto sim = llama::flag_value(server->args, llama::kSimilarityFlag)) {
      c.similarity = std::stod(*sim);
    }
  } catch (const std::exception&) {
    // The server rejects it and does not start: no prediction is made then.
  }
  return c;
}

}  // namespace

TraceSource::TraceSource(const scenario::Scenario& s, const workloads::TraceReplay& t,
                         const Clock& wall_clock, std::string run_id)
    : s_(s),
      t_(t),
      wall_clock_(wall_clock),
      sweep_(s, wall_clock, run_id),
      seed_(s.unique_first_line ? trace_mix(std::hash<std::string>{}(run_id)) : s.seed) {
  if (!t.requests) {
    throw InputError(fmt::format("{}: the trace cannot be replayed again without its file: {}",
                                 s.source, t.unread));
  }
}

void TraceSource::reset(const plan::Block& block, backend::Backend& be,
                        const std::vector<int>& slot0) {
  sweep_.reset(block, be, slot0);
  be_ = &be;
  text_ = !be.capabilities().prompt_ids;
  if (text_ && words_.empty()) {
    trace_text_words(be, s_.seed, words_, lead_, trail_);
  } else if (!text_ && pool_.empty()) {
    pool_ = trace_token_pool(be, s_.seed);
  }
  policy_.reset();
  unbounded_.reset();
  if (s_.server.managed()) {  // a managed llama-server: its settings are known
    policy_ = std::make_unique<tr::SlotPolicy>(cache_settings(s_, block.config));
    if (!slot0.empty()) {
      policy_->read(0, slot0);
    }
  } else if (t_.capacity_blocks || s_.server.cache_rule.stated()) {  // an attached block cache
    policy_ = std::make_unique<tr::BlockLruPolicy>(
        s_.server.cache_rule.step, s_.server.cache_rule.min_tokens, t_.capacity_blocks.value_or(0));
    // The same rule with no limit: what the server could reuse at its block size, the bound
    // below which a prediction is a capacity loss.
    unbounded_ = std::make_unique<tr::BlockLruPolicy>(s_.server.cache_rule.step,
                                                      s_.server.cache_rule.min_tokens, 0);
  }
  slot_of_.clear();
  first_sent_.reset();
  sent_blocks_.clear();  // a server (re)started: nothing of this replay is cached
}

workloads::ReplayRecord TraceSource::replay_part(int index) const {
  const auto& r = t_.requests->requests[static_cast<std::size_t>(index)];
  workloads::ReplayRecord out;
  out.index = t_.index_of(static_cast<std::size_t>(index));
  out.due_ms = r.due_ms;
  out.input_tokens = r.input_tokens;
  out.output_tokens = r.output_tokens;
  out.blocks = static_cast<int>(r.blocks.size());
  out.block_tokens = t_.requests->block_tokens;
  return out;  // its infinite-cache reuse is known when it is sent (expect)
}

CallRecord TraceSource::unsent(const plan::PlannedCall& call, const plan::Block& block) const {
  CallRecord r = sweep_.unsent(call, block);
  if (workloads::request_of(call)) {
    r.part = RecordPart::of(replay_part(*workloads::request_of(call)));
  }
  return r;
}

PreparedCall TraceSource::prepare(const plan::PlannedCall& call) {
  if (!workloads::request_of(call)) {
    return sweep_.prepare(call);
  }
  const auto& req = t_.requests->requests[static_cast<std::size_t>(*workloads::request_of(call))];
  PreparedCall p;
  p.call = call;
  p.record = sweep_.records().base(call, sweep_.block());
  p.record.part = RecordPart::of(replay_part(*workloads::request_of(call)));
  p.record.nonce = fmt::format("trace replay, token seed {:016x}", seed_);
  if (text_) {
    auto [text, own] = prompt_text(req, t_.requests->block_tokens, seed_, words_);
    p.ids = lead_;
    p.ids.insert(p.ids.end(), own.begin(), own.end());
    p.ids.insert(p.ids.end(), trail_.begin(), trail_.end());
    workloads::replay_record(p.record)->lead_tokens = static_cast<int>(lead_.size());
    // Checked before it is sent: the server reads the words as they read alone.
    try {
      workloads::replay_record(p.record)->materialized = be_->tokenize(text) == p.ids;
    } catch (const Error& e) {
      p.record.outcome = Outcome::tokenize_error;
      p.record.error = e.what();
      return p;
    }
    p.spec.prompt = std::move(text);
  } else {
    p.ids = prompt_ids(req, t_.requests->block_tokens, seed_, pool_);
    p.spec.prompt_ids = p.ids;
  }
  p.record.prompt_tokens_counted = static_cast<int>(p.ids.size());
  p.spec.slot = -1;  // the server picks: its slot choice is part of what is predicted
  p.spec.max_tokens = req.output_tokens;
  p.spec.seed = s_.seed;
  p.spec.timeout = std::chrono::milliseconds(static_cast<long long>(s_.timeout_s * 1000));
  p.cache_rule = s_.server.cache_rule;
  p.ready = true;
  return p;
}

std::optional<Together> TraceSource::together(const plan::Block& block, std::size_t from) const {
  if (!workloads::request_of(block.calls[from])) {
    return std::nullopt;
  }
  Together out{block.calls.size(), t_.concurrency, false, {}};
  if (!t_.closed) {
    for (std::size_t i = from; i < out.end; ++i) {
      const int index = workloads::request_of(block.calls[i]).value_or(0);
      out.due_s.push_back(t_.requests->requests[static_cast<std::size_t>(index)].due_ms / 1000);
    }
    const double first = out.due_s.front();
    for (double& d : out.due_s) {
      d -= first;
    }
  }
  return out;
}

void TraceSource::released(const PreparedCall& p, const backend::CallResult& res) {
  const auto it = slot_of_.find(p.call.seq);
  if (!policy_ || it == slot_of_.end()) {
    return;
  }
  if (res.outcome == Outcome::ok) {  // a stream without token ids: as many unknown tokens
    policy_->generated(it->second,
                       res.ids.empty() && res.server.predicted_n
                           ? std::vector<int>(static_cast<std::size_t>(*res.server.predicted_n), -1)
                           : res.ids);
  }
  policy_->release(it->second);
}

void TraceSource::expect(PreparedCall& p, std::optional<int> slot) {
  if (!workloads::request_of(p.call)) {
    sweep_.expect(p, slot);
    if (policy_) {
      policy_->read(p.spec.slot < 0 ? 0 : p.spec.slot, p.ids);
    }
    return;
  }
  auto& replay = *workloads::replay_record(p.record);
  const Nanos now = wall_clock_.now();
  if (!first_sent_) {
    first_sent_ = now - std::chrono::duration_cast<Nanos>(
                            std::chrono::duration<double, std::milli>(replay.due_ms));
  }
  replay.sent_ms = std::chrono::duration<double, std::milli>(now - *first_sent_).count();
  infinite_reuse(replay,
                 t_.requests->requests[static_cast<std::size_t>(*workloads::request_of(p.call))]);
  if (!policy_) {
    return;
  }
  const std::vector<int>& ids = p.ids;
  // In the server's count (cache_n): the tokens before the prompt's first block included.
  const int bound =
      unbounded_ ? unbounded_->send(ids).tokens
                 : replay.lead_tokens + std::min(replay.infinite_tokens, replay.input_tokens - 1);
  const tr::Prediction pred = policy_->send(ids);
  replay.predicted_tokens = pred.tokens;
  replay.predicted_slot = pred.slot;
  replay.predicted_from = pred.from;
  p.record.expected_cache_n = pred.tokens;
  if (pred.slot) {
    slot_of_[p.call.seq] = *pred.slot;
  }
  // Below what the server could reuse with room for everything (it reads a prompt's last token
  // again, and a block cache reuses whole blocks).
  if (pred.tokens < bound) {
    replay.loss = pred.elsewhere ? "placement" : "capacity";
  }
}

void TraceSource::infinite_reuse(workloads::ReplayRecord& replay, const tr::Request& r) {
  int blocks = 0;
  while (static_cast<std::size_t>(blocks) < r.blocks.size() &&
         sent_blocks_.count(r.blocks[static_cast<std::size_t>(blocks)]) != 0) {
    ++blocks;
  }
  replay.infinite_blocks = blocks;
  replay.infinite_tokens = std::min(r.input_tokens, blocks * t_.requests->block_tokens);
  sent_blocks_.insert(r.blocks.begin(), r.blocks.end());
  replay.working_set_blocks = static_cast<long long>(sent_blocks_.size());
}

void TraceSource::finish(PreparedCall& p, backend::CallResult res) {
  if (!workloads::request_of(p.call)) {
    // A warm-up's answer stays in its slot: its ids are not asked for, only its length matters.
    if (policy_ && res.outcome == Outcome::ok && res.server.predicted_n) {
      policy_->generated(p.spec.slot < 0 ? 0 : p.spec.slot,
                         std::vector<int>(static_cast<std::size_t>(*res.server.predicted_n), -1));
    }
    sweep_.finish(p, std::move(res));
    return;
  }
  sweep_.finish(p, std::move(res));
  auto& replay = *workloads::replay_record(p.record);
  const auto& server = p.record.server;
  if (!p.record.ok() || !server.cache_n || !replay.predicted_tokens) {
    return;
  }
  const int reused = *server.cache_n;
  const int predicted = *replay.predicted_tokens;
  if ((replay.materialized && !*replay.materialized) ||
      (server.prompt_total && *server.prompt_total != p.record.prompt_tokens_counted)) {
    replay.mismatch = "materialization";
  } else if (reused == predicted) {
    return;
  } else if (!server.prompt_total) {
    replay.mismatch = "unexplained";
  } else {
    replay.mismatch = reused < predicted ? "evicted" : "over_report";
  }
  p.record.flags.emplace_back("reuse_not_as_predicted");
}

}  // namespace kvbench::run

namespace kvbench::workloads {

std::unique_ptr<run::CallSource> make_source(const scenario::Scenario& s, const TraceReplay& w,
                                             const Clock& wall_clock, const std::string& run_id) {
  return std::make_unique<run::TraceSource>(s, w, wall_clock, run_id);
}

}  // namespace kvbench::workloads
