#pragma once
// What a server is predicted to reuse of each replayed request, from its caching policy, as a
// model of its state that the replay drives request by request.
//
// llama-server (SlotPolicy), as its version 0.7.0 (build 11669) does it: -np slots, each holding
// the tokens it read last (the prompt and what it generated, less the last generated token). A
// request goes to the idle slot whose tokens share the largest part of the request, where that
// part is more than --slot-prompt-similarity (ties: the lowest slot); otherwise to the idle slot
// whose last request ended first (a never-used one before any). With --cache-ram, a slot taken
// by the second rule, or by the first while it keeps less than half its tokens, first saves its
// tokens to a host cache and then loads the saved prompt that keeps more of itself and of the
// request (each compared as a share, a saved prompt keeping at least a quarter of itself); once
// a request starts, the other idle slots are saved too. A save is skipped where a saved prompt
// contains it, and drops the saved prompts it extends; the cache drops its oldest saves beyond
// its size. The server reads the last prompt token again, so a whole-prompt match reuses one
// token less than the prompt.

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbench::workloads::trace {

// A server's cache settings, as started (the managed server's argv) or as stated.
struct CacheSettings {
  int slots = 1;
  double similarity = 0.1;  // --slot-prompt-similarity (-sps)
  // --cache-ram in MiB: 0 off, < 0 no limit.
  long long host_mib = 0;
  // What a saved prompt takes in the host cache per token, in bytes (its sequence state: the KV
  // rows and each cell's position and sequence); 0: unknown, the size limit is then not modelled.
  double state_bytes_per_token = 0;
};

struct Prediction {
  int tokens = 0;           // reused
  std::optional<int> slot;  // the slot expected to take it
  std::string from;         // "slot", "host_cache" or "" (nothing reused)
  // Another idle slot, or a saved prompt, held more of the request than the one it went to.
  bool elsewhere = false;
};

class Policy {
 public:
  Policy() = default;
  virtual ~Policy() = default;
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  // `ids` is sent now: its slot (busy until release()), the reuse predicted; the slot holds ids.
  virtual Prediction send(const std::vector<int>& ids) = 0;
  // A call the replay did not predict (a warm-up) read `ids` on `slot`.
  virtual void read(int slot, const std::vector<int>& ids) = 0;
  // The call on `slot` generated `ids` after its prompt (the last of them is not cached).
  virtual void generated(int slot, const std::vector<int>& ids) = 0;
  // The call on `slot` ended.
  virtual void release(int slot) = 0;
};

// The longest common prefix of two token lists.
std::size_t common_prefix(const std::vector<int>& a, const std::vector<int>& b);

class SlotPolicy final : public Policy {
 public:
  explicit SlotPolicy(const CacheSettings& settings);

  Prediction send(const std::vector<int>& ids) override;
  void read(int slot, const std::vector<int>& ids) override;
  void generated(int slot, const std::vector<int>& ids) override;
  void release(int slot) override;

 private:
  struct Slot {
    std::vector<int> tokens;
    bool busy = false;
    long long used = -1;  // when it last took a request (a counter); -1 never
  };
  // The slot a request goes to, and whether its host cache is consulted.
  std::pair<int, bool> choose(const std::vector<int>& ids) const;
  // The host cache: `tokens` saved (the rules above), and the best saved prompt for `ids` taken
  // out into `slot`; true when one was.
  void save(const std::vector<int>& tokens);
  bool load(Slot& slot, const std::vector<int>& ids);
  std::size_t saved_tokens() const;
  // The most tokens the host cache keeps (its size in bytes over a token's state); none: no limit
  // known.
  std::optional<std::size_t> host_limit_tokens() const;

  CacheSettings settings_;
  std::vector<Slot> slots_;
  std::list<std::vector<int>> host_;  // the oldest save first
  long long clock_ = 0;
};

// A server that caches whole blocks of `block` tokens in one pool, least recently used out
// (vLLM's and SGLang's automatic prefix caching, as documented): a request reuses its longest run
// of cached leading blocks, less the last block where that would be the whole prompt, and none
// below `min_tokens`; then its blocks become the most recently used (its first block the most
// recent) and the pool keeps `capacity` blocks (0: no limit).
class BlockLruPolicy final : public Policy {
 public:
  BlockLruPolicy(int block, int min_tokens, std::size_t capacity);

  Prediction send(const std::vector<int>& ids) override;
  void read(int /*slot*/, const std::vector<int>& ids) override { send(ids); }
  void generated(int /*slot*/, const std::vector<int>& /*ids*/) override {}
  void release(int /*slot*/) override {}

 private:
  int block_;
  int min_tokens_;
  std::size_t capacity_;
  std::list<std::uint64_t> order_;  // most recently used first
  std::map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace kvbench::workloads::trace
