// Reuse arithmetic of a trace: infinite-cache and block-LRU prefix reuse per request, the
// run-level hit rates under their three named definitions, and how far apart a prefix family's
// requests arrive.

#include <algorithm>
#include <list>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "harness/workloads/trace/reuse.h"
#include "harness/workloads/trace/select.h"

namespace kvbench::workloads::trace {

namespace {

Reuse reuse_of(const Trace& trace, const Request& r, std::size_t hit_blocks) {
  const long long tokens = static_cast<long long>(hit_blocks) * trace.block_tokens;
  return {static_cast<int>(hit_blocks), std::min<long long>(tokens, r.input_tokens)};
}

// A block LRU: the most recently used block at the front.
class BlockLru {
 public:
  explicit BlockLru(std::size_t capacity) : capacity_(capacity) {}

  bool contains(std::uint64_t id) const { return where_.count(id) != 0; }

  void touch(std::uint64_t id) {
    if (const auto it = where_.find(id); it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.push_front(id);
    where_[id] = order_.begin();
  }

  void evict_past_capacity() {
    while (order_.size() > capacity_) {
      where_.erase(order_.back());
      order_.pop_back();
    }
  }

 private:
  std::size_t capacity_;
  std::list<std::uint64_t> order_;
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace

std::vector<Reuse> infinite_reuse(const Trace& trace) {
  std::unordered_set<std::uint64_t> sent;
  std::vector<Reuse> out;
  out.reserve(trace.requests.size());
  for (const auto& r : trace.requests) {
    std::size_t k = 0;
    while (k < r.blocks.size() && sent.count(r.blocks[k]) != 0) {
      ++k;
    }
    out.push_back(reuse_of(trace, r, k));
    sent.insert(r.blocks.begin(), r.blocks.end());
  }
  return out;
}

std::vector<Reuse> lru_reuse(const Trace& trace, std::size_t capacity_blocks) {
  BlockLru cache(capacity_blocks);
  std::vector<Reuse> out;
  out.reserve(trace.requests.size());
  for (const auto& r : trace.requests) {
    std::size_t k = 0;
    while (k < r.blocks.size() && cache.contains(r.blocks[k])) {
      ++k;
    }
    out.push_back(reuse_of(trace, r, k));
    for (auto it = r.blocks.rbegin(); it != r.blocks.rend(); ++it) {
      cache.touch(*it);
    }
    cache.evict_past_capacity();
  }
  return out;
}

HitRates hit_rates(const Trace& trace, const std::vector<Reuse>& reuse) {
  long long hit_blocks = 0;
  long long blocks = 0;
  long long hit_tokens = 0;
  long long tokens = 0;
  double share_sum = 0;
  long long with_blocks = 0;
  const std::size_t n = std::min(trace.requests.size(), reuse.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = trace.requests[i];
    const auto size = static_cast<long long>(r.blocks.size());
    hit_blocks += reuse[i].blocks;
    blocks += size;
    hit_tokens += reuse[i].tokens;
    tokens += r.input_tokens;
    if (size > 0) {
      share_sum += static_cast<double>(reuse[i].blocks) / static_cast<double>(size);
      ++with_blocks;
    }
  }
  const auto ratio = [](double num, long long den) {
    return den > 0 ? num / static_cast<double>(den) : 0.0;
  };
  return {
      {"blocks", "reused blocks / blocks sent", ratio(static_cast<double>(hit_blocks), blocks)},
      {"tokens", "reused tokens / input tokens", ratio(static_cast<double>(hit_tokens), tokens)},
      {"per_request_mean", "mean over requests of reused blocks / the request's blocks",
       ratio(share_sum, with_blocks)},
  };
}

std::vector<std::size_t> family_predecessor_distances(const Trace& trace) {
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> last_seen;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < trace.requests.size(); ++i) {
    const auto key = family_key(trace.requests[i]);
    if (!key) {
      continue;
    }
    if (const auto it = last_seen.find(*key); it != last_seen.end()) {
      out.push_back(i - it->second);
      it->second = i;
    } else {
      last_seen.emplace(*key, i);
    }
  }
  return out;
}

}  // namespace kvbench::workloads::trace
