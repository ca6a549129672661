#include "harness/analysis/prefix.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/analysis/analysis.h"

namespace kvbench::analysis {

namespace {

constexpr std::size_t kResamples = 2000;
constexpr std::uint64_t kBootstrapSeed = 1;

bool has_flag(const CallRecord& r, std::string_view f) {
  return std::find(r.flags.begin(), r.flags.end(), f) != r.flags.end();
}

std::optional<double> ratio(const std::optional<double>& num, const std::optional<double>& den) {
  if (!num || !den || *den <= 0) {
    return std::nullopt;
  }
  return *num / *den;
}

std::optional<int> reported_tokens(const CallRecord& r) {
  if (!r.server.prompt_n || !r.server.cache_n) {
    return std::nullopt;
  }
  return *r.server.prompt_n + *r.server.cache_n;
}

// A pair placed by text on a server that reports the whole prompt as its count and no cache_n
// (Ollama's prompt_eval_count): the prediction comes from the estimated first difference.
void placed_by_text(PairResult& p, const CallRecord& cold, const CallRecord& edited) {
  p.text_fraction = edited.edit_text_fraction;
  p.cold_tokens_reported = cold.server.prompt_n;
  p.edited_tokens_reported = edited.server.prompt_n;
  if (!edited.server.prompt_n || !edited.edit_first_diff || *edited.server.prompt_n < 1) {
    return;
  }
  const int n = *edited.server.prompt_n;
  p.tokens = n;
  p.expected_ratio = static_cast<double>(n - std::clamp(*edited.edit_first_diff, 0, n - 1)) / n;
}

PairResult make_pair(const CallRecord& cold, const CallRecord& edited) {
  PairResult p;
  p.pair_id = *cold.pair_id;
  p.edit_position = edited.edit_position;
  p.prompt_tokens = edited.prompt_tokens;
  p.num_ctx = edited.num_ctx;
  p.cache_type = edited.cache_type;
  p.tokens = edited.prompt_tokens_counted.value_or(0);
  p.first_diff = edited.edit_first_diff;
  p.cold_ttft_ms = cold.client.ttft_ms;
  p.edited_ttft_ms = edited.client.ttft_ms;
  p.cold_prompt_ms = cold.server.prompt_ms;
  p.edited_prompt_ms = edited.server.prompt_ms;
  p.ttft_ratio = ratio(p.edited_ttft_ms, p.cold_ttft_ms);
  p.prompt_ms_ratio = ratio(p.edited_prompt_ms, p.cold_prompt_ms);
  p.cache_n = edited.server.cache_n;
  p.expected_cache_n = edited.expected_cache_n;
  p.cold_cache_n = cold.server.cache_n;
  p.cold_expected_cache_n = cold.expected_cache_n;
  if (edited.prompt_tokens_counted && edited.expected_cache_n && cold.prompt_tokens_counted &&
      cold.expected_cache_n) {
    const int cold_reads = *cold.prompt_tokens_counted - *cold.expected_cache_n;
    const int edited_reads = *edited.prompt_tokens_counted - *edited.expected_cache_n;
    if (cold_reads > 0) {
      p.expected_ratio = static_cast<double>(edited_reads) / cold_reads;
    }
  }
  p.cold_tokens_reported = reported_tokens(cold);
  p.edited_tokens_reported = reported_tokens(edited);
  if (edited.edit_text_fraction) {
    placed_by_text(p, cold, edited);
  }
  return p;
}

double median_of(std::vector<double> v) {
  return stats::median(v);
}

// Fractions ascending, then the special levels in a fixed order.
std::tuple<int, double> position_order(const std::string& label) {
  static const std::vector<std::string> kSpecial = {"none", "question", "timestamp_first",
                                                    "timestamp_last"};
  const auto it = std::find(kSpecial.begin(), kSpecial.end(), label);
  if (it != kSpecial.end()) {
    return {1 + static_cast<int>(it - kSpecial.begin()), 0.0};
  }
  try {
    return {0, std::stod(label)};
  } catch (const std::exception&) {
    return {9, 0.0};
  }
}

void lesson_figure(PositionSummary& s, const nlohmann::json& figures) {
  const auto& positions =
      figures.value("/prefix_reuse/edit_position"_json_pointer, nlohmann::json::object());
  if (!positions.contains(s.edit_position)) {
    return;
  }
  const auto& f = positions[s.edit_position];
  if (f.contains("ratio")) {
    s.lesson_ratio = f["ratio"].get<double>();
    s.lesson_text = fmt::format("{:.2f}", *s.lesson_ratio);
  } else if (f.contains("cold_s") && f.contains("edited_s")) {
    const double cold = f["cold_s"].get<double>();
    const double edited = f["edited_s"].get<double>();
    s.lesson_ratio = edited / cold;
    s.lesson_text = fmt::format("{:.3f} ({} s / {} s)", *s.lesson_ratio, edited, cold);
  }
}

std::string judge(PositionSummary& s) {
  const auto measured = s.prompt_ms_ratio ? s.prompt_ms_ratio : s.ttft_ratio;
  if (!measured || !s.expected_ratio) {
    return "no complete pair with timings: nothing to judge";
  }
  const double e = *s.expected_ratio;
  const double a = s.attention_ratio.value_or(e);
  const double gap = *measured - e;
  // Between "every token costs the same" and "attention dominates", a tolerance either side.
  const bool time_ok = *measured >= e - kRatioTolerance && *measured <= a + kRatioTolerance;
  const bool dearer_late = time_ok && gap > kRatioTolerance;
  if (s.reuse_checked == 0) {
    s.reuse_inferred = true;
    s.consistent = time_ok;
    return time_ok ? "consistent with prefix reuse up to the first difference, inferred from "
                     "time only (the server reports no reused-token count)"
                   : fmt::format(
                         "the time ratio {:.3f} is not the {:.3f} that reuse up to the "
                         "first difference predicts (the server reports no reused-token count)",
                         *measured, *s.expected_ratio);
  }
  if (s.reuse_matched == s.reuse_checked) {
    s.reuse_exact = true;
    s.consistent = time_ok;
    if (dearer_late) {
      return fmt::format(
          "consistent with prefix reuse up to the first difference; the resend took {:.3f} of "
          "the cold read, between its share of tokens ({:.3f}) and its share of the attention "
          "work ({:.3f}): tokens late in a prompt cost more to read",
          *measured, e, a);
    }
    if (time_ok) {
      return "consistent with prefix reuse up to the first difference";
    }
    return gap > 0 ? fmt::format(
                         "prefix reuse up to the first difference (cache_n exact), but the "
                         "resend took {:.3f} of the cold read, more than its share of tokens "
                         "({:.3f}) and of the attention work ({:.3f}): the machine was busy, "
                         "or the resend was slowed otherwise",
                         *measured, e, a)
                   : fmt::format(
                         "prefix reuse up to the first difference (cache_n exact), but the "
                         "resend took only {:.3f} of the cold read where its share of "
                         "tokens is {:.3f}: the cold reads were slowed (a busy machine?)",
                         *measured, *s.expected_ratio);
  }
  if (s.median_cache_n <= 1 && s.median_expected_cache_n > 1) {
    return "no prefix reuse: the resend was read in full";
  }
  if (s.median_cache_n < s.median_expected_cache_n) {
    return fmt::format(
        "reuse stopped before the first difference: the server reused {} tokens of {} shared",
        s.median_cache_n, s.median_expected_cache_n);
  }
  if (s.median_cache_n > s.median_expected_cache_n) {
    return fmt::format(
        "more reuse than the shared prefix allows ({} tokens of {} shared): a prompt cache "
        "restored an older prompt",
        s.median_cache_n, s.median_expected_cache_n);
  }
  return fmt::format("cache_n matched the shared prefix in only {} of {} pairs", s.reuse_matched,
                     s.reuse_checked);
}

template <typename F>
std::vector<double> values_of(const std::vector<const PairResult*>& ps, F&& get) {
  std::vector<double> out;
  for (const auto* p : ps) {
    if (auto v = get(*p)) {
      out.push_back(static_cast<double>(*v));
    }
  }
  return out;
}

PositionSummary summarize_group(const std::vector<const PairResult*>& ps,
                                const nlohmann::json& figures) {
  PositionSummary s;
  s.edit_position = ps.front()->edit_position;
  s.prompt_tokens = ps.front()->prompt_tokens;
  s.pairs = static_cast<int>(ps.size());
  if (const auto [special, f] = position_order(s.edit_position); special == 0) {
    s.one_minus_f = 1.0 - f;
  }
  auto med_ci = [](const std::vector<double>& v, std::optional<double>& med,
                   std::optional<stats::Interval>& ci) {
    if (!v.empty()) {
      med = median_of(v);
      ci = stats::bootstrap_median_ci(v, kResamples, 0.95, kBootstrapSeed);
    }
  };
  med_ci(values_of(ps, [](const PairResult& p) { return p.prompt_ms_ratio; }), s.prompt_ms_ratio,
         s.prompt_ms_ci);
  med_ci(values_of(ps, [](const PairResult& p) { return p.ttft_ratio; }), s.ttft_ratio, s.ttft_ci);
  if (auto v = values_of(ps, [](const PairResult& p) { return p.expected_ratio; }); !v.empty()) {
    s.expected_ratio = median_of(v);
    s.attention_ratio = *s.expected_ratio * (2.0 - *s.expected_ratio);
  }
  auto share = values_of(ps, [](const PairResult& p) -> std::optional<double> {
    return p.first_diff && p.tokens > 0 ? std::optional(double(*p.first_diff) / p.tokens)
                                        : std::nullopt;
  });
  if (!share.empty()) {
    s.first_diff_share = median_of(share);
  }
  std::vector<double> got;
  std::vector<double> want;
  for (const auto* p : ps) {
    if (p->cache_n && p->expected_cache_n) {
      ++s.reuse_checked;
      s.reuse_matched += *p->cache_n == *p->expected_cache_n ? 1 : 0;
      s.reuse_max_gap = std::max(s.reuse_max_gap, std::abs(*p->cache_n - *p->expected_cache_n));
      got.push_back(*p->cache_n);
      want.push_back(*p->expected_cache_n);
    }
  }
  if (!got.empty()) {
    s.median_cache_n = median_of(got);
    s.median_expected_cache_n = median_of(want);
  }
  lesson_figure(s, figures);
  s.verdict = judge(s);
  return s;
}

}  // namespace

std::vector<PairResult> collect_pairs(const std::vector<CallRecord>& calls) {
  std::map<int, const CallRecord*> cold;
  std::vector<PairResult> out;
  for (const auto& r : calls) {
    if (!r.pair_id || !r.ok()) {
      continue;
    }
    if (r.pair_role == PairRole::cold) {
      cold[*r.pair_id] = &r;
    } else if (r.pair_role == PairRole::edited && cold.count(*r.pair_id) != 0) {
      out.push_back(make_pair(*cold[*r.pair_id], r));
    }
  }
  return out;
}

PairCounts count_pairs(const std::vector<CallRecord>& calls) {
  PairCounts c;
  for (const auto& r : calls) {
    c.planned += r.pair_id && r.pair_role == PairRole::cold ? 1 : 0;
  }
  c.complete = static_cast<int>(collect_pairs(calls).size());
  return c;
}

std::vector<PositionSummary> summarize_positions(const std::vector<PairResult>& pairs,
                                                 const nlohmann::json& figures) {
  std::map<std::tuple<int, int, double, std::string>, std::vector<const PairResult*>> groups;
  for (const auto& p : pairs) {
    const auto [special, f] = position_order(p.edit_position);
    groups[{p.prompt_tokens, special, f, p.edit_position}].push_back(&p);
  }
  std::vector<PositionSummary> out;
  for (const auto& [key, ps] : groups) {
    out.push_back(summarize_group(ps, figures));
  }
  return out;
}

std::string overall_verdict(const std::vector<PositionSummary>& rows) {
  if (rows.empty()) {
    return "no complete pair: nothing to judge";
  }
  std::vector<std::string> off;
  for (const auto& r : rows) {
    if (!r.consistent) {
      off.push_back(fmt::format("{} ({})", r.edit_position, r.verdict));
    }
  }
  const bool inferred = std::any_of(rows.begin(), rows.end(),
                                    [](const PositionSummary& r) { return r.reuse_inferred; });
  if (off.empty() && inferred) {
    return fmt::format(
        "Consistent with prefix reuse up to the first difference, inferred from time only: every "
        "resend's time fell to its share of tokens from the first difference on, or of the "
        "attention work over them, within {}. The "
        "server reports no reused-token count (Ollama counts the whole prompt whether it read or "
        "reused it), so the reuse itself is not confirmed.",
        kRatioTolerance);
  }
  if (off.empty()) {
    return "Consistent with prefix reuse up to the first difference: every resend re-read only "
           "the tokens from its first difference on, its time fell accordingly (to between their "
           "share of the tokens and their share of the attention work, within " +
           fmt::format("{}", kRatioTolerance) +
           "), and the server's cache_n equalled the shared prefix in every pair.";
  }
  const bool all_exact =
      std::all_of(rows.begin(), rows.end(), [](const PositionSummary& r) { return r.reuse_exact; });
  if (all_exact) {
    std::vector<std::string> where;
    for (const auto& r : rows) {
      if (!r.consistent) {
        where.push_back(r.edit_position);
      }
    }
    return fmt::format(
        "Prefix reuse up to the first difference: the server's cache_n equalled the shared "
        "prefix in every pair. The time followed the prediction (within {}) except at {}, "
        "where the resend cost more (or less) than its share of tokens: see the rows.",
        kRatioTolerance, fmt::join(where, ", "));
  }
  return fmt::format("Not consistent with prefix reuse up to the first difference at: {}.",
                     fmt::join(off, "; "));
}

std::vector<TrapSummary> summarize_trap(const std::vector<CallRecord>& calls) {
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> by_length;
  std::vector<const CallRecord*> order;
  for (const auto& r : calls) {
    order.push_back(&r);
  }
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->seq < b->seq; });
  std::map<int, const CallRecord*> previous;  // per block: the call before, any kind
  for (const auto* r : order) {
    const CallRecord* before = previous[r->block];
    previous[r->block] = r;
    if (!analysis::single_timed(*r) || !r->ok() || !r->client.ttft_ms) {
      continue;
    }
    // A server that reports reuse (llama-server's cache_n) says so in the flag. One that does not
    // (Ollama) held the same prompt in its one slot when the call just before sent it as well.
    const bool hit = r->server.cache_n ? has_flag(*r, "prompt_cache_hit")
                                       : before != nullptr && before->ok() && !r->nonce.empty() &&
                                             before->nonce == r->nonce &&
                                             before->prompt_tokens == r->prompt_tokens;
    auto& [hits, cold] = by_length[r->prompt_tokens];
    (hit ? hits : cold).push_back(*r->client.ttft_ms);
  }
  std::vector<TrapSummary> out;
  for (const auto& [tokens, v] : by_length) {
    if (v.first.empty()) {
      continue;
    }
    TrapSummary t;
    t.prompt_tokens = tokens;
    t.hits = static_cast<int>(v.first.size());
    t.cold = static_cast<int>(v.second.size());
    t.hit_ttft_ms = median_of(v.first);
    if (!v.second.empty()) {
      t.cold_ttft_ms = median_of(v.second);
      t.speedup = ratio(t.cold_ttft_ms, t.hit_ttft_ms);
    }
    out.push_back(t);
  }
  return out;
}

PrefixReport prefix_report(const std::vector<CallRecord>& calls, const nlohmann::json& figures) {
  PrefixReport r;
  r.counts = count_pairs(calls);
  r.pairs = collect_pairs(calls);
  r.positions = summarize_positions(r.pairs, figures);
  r.trap = summarize_trap(calls);
  return r;
}

}  // namespace kvbench::analysis
