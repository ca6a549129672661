#pragma once
// A trace replay as a CallSource (the trace workload): each request's prompt made of its blocks'
// tokens, sent at its arrival time (or as soon as a stream is free), the server left to pick its
// slot, and three reuse figures in its record: what an infinite cache would reuse, what the
// server's policy predicts (policy.h) and what the server reported, with every gap named.
// Warm-ups are the sweep's.
//
// Kinds whose endpoint takes token ids get the prompt's ids. The others (chat endpoints, the
// Anthropic messages API) get text: each block is words whose tokens, read alone through the
// server's /tokenize and chat template, add up to the block's size; every prompt is tokenized
// again before it is sent and its record says whether it read as planned (materialized).

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/run/call_source.h"
#include "harness/workloads/sweep/source.h"
#include "harness/workloads/trace/policy.h"
#include "harness/workloads/trace/record.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::run {

class TraceSource final : public CallSource {
 public:
  TraceSource(const scenario::Scenario& s, const workloads::TraceReplay& t, const Clock& wall_clock,
              std::string run_id);

  void reset(const plan::Block& block, backend::Backend& be,
             const std::vector<int>& slot0) override;
  CallRecord unsent(const plan::PlannedCall& call, const plan::Block& block) const override;
  PreparedCall prepare(const plan::PlannedCall& call) override;
  std::optional<Together> together(const plan::Block& block, std::size_t from) const override;
  void released(const PreparedCall& p, const backend::CallResult& res) override;
  void expect(PreparedCall& p, std::optional<int> slot) override;
  void finish(PreparedCall& p, backend::CallResult res) override;

  // The token ids of a request's prompt in a run: each block id's tokens drawn from `pool` by a
  // hash of `seed`, the id and the position, so equal ids give equal tokens. Pure.
  static std::vector<int> prompt_ids(const workloads::trace::Request& r, int block_tokens,
                                     std::uint64_t seed, const std::vector<int>& pool);

  // A word a text prompt is made of: its text (a space first) and the token ids it reads as.
  struct Word {
    std::string text;
    std::vector<int> ids;
  };
  // A request's prompt as text and the ids its words read as: each block id's words drawn from
  // `words` by the same hash as prompt_ids, a word too long for what is left of the block
  // replaced by a one-token word (`words` must hold one). Pure.
  static std::pair<std::string, std::vector<int>> prompt_text(const workloads::trace::Request& r,
                                                              int block_tokens, std::uint64_t seed,
                                                              const std::vector<Word>& words);
  // What one token of a saved prompt takes in llama-server's host cache: its KV rows at
  // `cache_type` and, per cell, its position, its count of sequences and the one sequence
  // (llama_state_seq_*). `model` is a scenario's server.model; 0 when its shape or the type is
  // not known.
  static double state_bytes_per_token(const std::string& model, const std::string& cache_type);

 private:
  workloads::ReplayRecord replay_part(int index) const;
  // What an infinite cache gives `r` of the blocks sent since the server started; then r's
  // blocks are sent too.
  void infinite_reuse(workloads::ReplayRecord& replay, const workloads::trace::Request& r);

  const scenario::Scenario& s_;
  const workloads::TraceReplay& t_;
  const Clock& wall_clock_;
  SweepSource sweep_;  // warm-ups, and the records' plan fields
  std::uint64_t seed_ = 0;
  std::set<std::uint64_t> sent_blocks_;  // the block ids sent since the server started
  std::vector<int> pool_;                // the token ids prompts are made of
  // Text prompts: the words, and the tokens the server reads before and after a prompt.
  bool text_ = false;
  std::vector<Word> words_;
  std::vector<int> lead_;
  std::vector<int> trail_;
  backend::Backend* be_ = nullptr;  // the block's server, for checking text prompts
  std::unique_ptr<workloads::trace::Policy> policy_;
  std::unique_ptr<workloads::trace::Policy> unbounded_;  // a block cache without a limit
  std::map<int, int> slot_of_;  // a request's seq: the slot predicted for it
  std::optional<Nanos> first_sent_;
};

}  // namespace kvbench::run
