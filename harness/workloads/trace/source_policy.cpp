// llama-server's caching policy as a model (policy.h), driven by a trace replay.

#include <algorithm>

#include "harness/workloads/trace/policy.h"

namespace kvbench::workloads::trace {

namespace {

double share(std::size_t part, std::size_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

std::size_t common_prefix(const std::vector<int>& a, const std::vector<int>& b) {
  const auto mismatch = std::mismatch(
      a.begin(), a.begin() + static_cast<std::ptrdiff_t>(std::min(a.size(), b.size())), b.begin());
  return static_cast<std::size_t>(mismatch.first - a.begin());
}

SlotPolicy::SlotPolicy(const CacheSettings& settings)
    : settings_(settings), slots_(static_cast<std::size_t>(std::max(1, settings.slots))) {}

std::optional<std::size_t> SlotPolicy::host_limit_tokens() const {
  if (settings_.host_mib < 0 || settings_.state_bytes_per_token <= 0) {
    return std::nullopt;
  }
  const double bytes = static_cast<double>(settings_.host_mib) * 1024 * 1024;
  return static_cast<std::size_t>(bytes / settings_.state_bytes_per_token);
}

std::size_t SlotPolicy::saved_tokens() const {
  std::size_t n = 0;
  for (const auto& e : host_) {
    n += e.size();
  }
  return n;
}

// llama-server's server_prompt_cache::alloc and update: a prompt held whole by a saved one is not
// saved again, nor one larger than the whole cache; saved prompts it extends go; then the oldest
// saves go (first in, first out: a restore takes a prompt out) until it fits.
void SlotPolicy::save(const std::vector<int>& tokens) {
  if (settings_.host_mib == 0 || tokens.empty()) {
    return;
  }
  for (const auto& e : host_) {
    if (common_prefix(e, tokens) == tokens.size()) {
      return;  // already saved, whole
    }
  }
  const auto limit = host_limit_tokens();
  if (limit && tokens.size() > *limit) {
    return;
  }
  host_.remove_if([&](const std::vector<int>& e) { return common_prefix(e, tokens) == e.size(); });
  if (limit) {
    while (!host_.empty() && saved_tokens() + tokens.size() > *limit) {
      host_.pop_front();
    }
  }
  host_.push_back(tokens);  // the newest at the back
}

bool SlotPolicy::load(Slot& slot, const std::vector<int>& ids) {
  const std::size_t own = common_prefix(slot.tokens, ids);
  double keep_best = slot.tokens.empty() ? -1.0 : share(own, slot.tokens.size());
  double sim_best = share(own, ids.size());
  auto pick = host_.end();
  for (auto it = host_.begin(); it != host_.end(); ++it) {
    const std::size_t n = common_prefix(*it, ids);
    const double keep = share(n, it->size());
    const double sim = share(n, ids.size());
    if (keep >= 0.25 && keep > keep_best && sim > sim_best) {
      pick = it;
      keep_best = keep;
      sim_best = sim;
    }
  }
  if (pick == host_.end()) {
    return false;
  }
  slot.tokens = std::move(*pick);
  host_.erase(pick);
  return true;
}

std::pair<int, bool> SlotPolicy::choose(const std::vector<int>& ids) const {
  int best = -1;
  double best_sim = 0;
  if (settings_.similarity > 0) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if (s.busy || s.tokens.empty()) {
        continue;
      }
      const double sim = share(common_prefix(s.tokens, ids), ids.size());
      if (sim > best_sim && sim > settings_.similarity) {
        best = static_cast<int>(i);
        best_sim = sim;
      }
    }
  }
  if (best >= 0) {
    const Slot& s = slots_[static_cast<std::size_t>(best)];
    return {best, share(common_prefix(s.tokens, ids), s.tokens.size()) < 0.5};
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.busy && (best < 0 || s.used < slots_[static_cast<std::size_t>(best)].used)) {
      best = static_cast<int>(i);
    }
  }
  return {best, true};
}

Prediction SlotPolicy::send(const std::vector<int>& ids) {
  // Every slot busy: the server defers the request until one ends; the driver sends no more
  // requests than slots, so the one that ended is not known yet: the least recently taken.
  if (std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; })) {
    std::min_element(slots_.begin(), slots_.end(), [](const Slot& a, const Slot& b) {
      return a.used < b.used;
    })->busy = false;
  }
  const auto [index, consult] = choose(ids);
  Slot& slot = slots_[static_cast<std::size_t>(index)];
  // What any other slot or saved prompt holds of the request, before this one changes them.
  std::size_t elsewhere = 0;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (static_cast<int>(i) != index) {
      elsewhere = std::max(elsewhere, common_prefix(slots_[i].tokens, ids));
    }
  }
  for (const auto& e : host_) {
    elsewhere = std::max(elsewhere, common_prefix(e, ids));
  }
  bool loaded = false;
  if (consult && settings_.host_mib != 0) {
    save(slot.tokens);
    loaded = load(slot, ids);
  }
  std::size_t reused = common_prefix(slot.tokens, ids);
  const std::size_t matched = reused;
  if (reused == ids.size() && reused > 0) {
    --reused;  // the last prompt token is always read again
  }
  slot.tokens = ids;
  slot.busy = true;
  slot.used = ++clock_;
  if (settings_.host_mib != 0) {  // the other idle slots are saved once a request starts
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (static_cast<int>(i) != index && !slots_[i].busy) {
        save(slots_[i].tokens);
      }
    }
  }
  Prediction p;
  p.tokens = static_cast<int>(reused);
  p.slot = index;
  p.from = reused == 0 ? "" : (loaded ? "host_cache" : "slot");
  p.elsewhere = elsewhere > matched;
  return p;
}

void SlotPolicy::read(int slot, const std::vector<int>& ids) {
  Slot& s = slots_.at(static_cast<std::size_t>(slot));
  s.tokens = ids;
  s.used = ++clock_;
}

void SlotPolicy::generated(int slot, const std::vector<int>& ids) {
  Slot& s = slots_.at(static_cast<std::size_t>(slot));
  if (!ids.empty()) {  // the last generated token is never read into the cache
    s.tokens.insert(s.tokens.end(), ids.begin(), ids.end() - 1);
  }
}

void SlotPolicy::release(int slot) {
  Slot& s = slots_.at(static_cast<std::size_t>(slot));
  s.busy = false;
  s.used = ++clock_;  // the least recently used slot is the one whose request ended first
}

BlockLruPolicy::BlockLruPolicy(int block, int min_tokens, std::size_t capacity)
    : block_(std::max(1, block)), min_tokens_(min_tokens), capacity_(capacity) {}

Prediction BlockLruPolicy::send(const std::vector<int>& ids) {
  // Each whole block named by its tokens and every token before it (FNV-1a over the ids).
  std::vector<std::uint64_t> keys;
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    h = (h ^ static_cast<std::uint32_t>(ids[i])) * 1099511628211ULL;
    if ((i + 1) % static_cast<std::size_t>(block_) == 0) {
      keys.push_back(h);
    }
  }
  std::size_t hits = 0;
  while (hits < keys.size() && where_.count(keys[hits]) != 0) {
    ++hits;
  }
  int reused = static_cast<int>(hits) * block_;
  if (reused >= static_cast<int>(ids.size()) && reused > 0) {
    reused -= block_;  // at least one token is computed
  }
  if (reused < min_tokens_) {
    reused = 0;
  }
  for (auto k = keys.rbegin(); k != keys.rend(); ++k) {
    if (const auto it = where_.find(*k); it != where_.end()) {
      order_.erase(it->second);
    }
    order_.push_front(*k);
    where_[*k] = order_.begin();
  }
  while (capacity_ > 0 && order_.size() > capacity_) {
    where_.erase(order_.back());
    order_.pop_back();
  }
  Prediction p;
  p.tokens = reused;
  p.from = reused > 0 ? "blocks" : "";
  return p;
}

}  // namespace kvbench::workloads::trace
