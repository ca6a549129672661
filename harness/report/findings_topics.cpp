// The findings on server settings, an edit's position, memory and the proof (findings_text.h).

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/report/findings_text.h"

namespace kvbench::report::findings_text {

namespace {

using analysis::Effect;
using nlohmann::json;

constexpr double kFindingMiB = 1024.0 * 1024.0;
// Half of the 0.01 MiB a server log prints its KV sizes to, rounded up (5,243 bytes).
constexpr std::uint64_t kLoggedMibHalfStep = 5243;

// A split pair's halves: " with K 4.00 MiB and V 2.12 MiB, each as the arithmetic says", or
// what the arithmetic says of each where the log differs; empty for a pair of one type.
std::string halves_text(const analysis::BlockMemoryRow& b) {
  if (!b.kv_halves) {
    return "";
  }
  const auto& h = *b.kv_halves;
  const auto mib = [](std::uint64_t v) {
    return finding_number(static_cast<double>(v) / kFindingMiB);
  };
  const auto near = [](std::optional<std::uint64_t> logged, std::uint64_t arithmetic) {
    return logged && (*logged > arithmetic ? *logged - arithmetic : arithmetic - *logged) <=
                         kLoggedMibHalfStep;
  };
  if (!h.k_logged_bytes || !h.v_logged_bytes) {
    return fmt::format(", K {} MiB and V {} MiB by the arithmetic", mib(h.k_arithmetic_bytes),
                       mib(h.v_arithmetic_bytes));
  }
  if (near(h.k_logged_bytes, h.k_arithmetic_bytes) &&
      near(h.v_logged_bytes, h.v_arithmetic_bytes)) {
    return fmt::format(", K {} MiB and V {} MiB, each as the arithmetic says",
                       mib(*h.k_logged_bytes), mib(*h.v_logged_bytes));
  }
  return fmt::format(", K {} MiB and V {} MiB (the arithmetic says {} and {})",
                     mib(*h.k_logged_bytes), mib(*h.v_logged_bytes), mib(h.k_arithmetic_bytes),
                     mib(h.v_arithmetic_bytes));
}

// The reference level of a factor: the level of the conditions that no effect names.
std::string reference_of(const RunReport& r, const std::string& factor) {
  std::vector<std::string> levels;
  if (factor == "cache_type") {
    levels = distinct<std::string>(r.conditions, [](const auto& c) { return c.cache_type; });
  } else if (factor == "num_ctx") {
    for (int n : distinct<int>(r.conditions, [](const auto& c) { return c.num_ctx; })) {
      levels.push_back(std::to_string(n));
    }
  } else if (factor == "variant") {
    levels = distinct<std::string>(r.conditions, [](const auto& c) { return c.variant; });
  }
  for (const auto& level : levels) {
    const std::string term = factor + "=" + level;
    const bool named =
        std::any_of(r.analysis.effects.effects.begin(), r.analysis.effects.effects.end(),
                    [&](const Effect& e) { return e.term.starts_with(term); }) ||
        std::any_of(r.analysis.effects.withheld.begin(), r.analysis.effects.withheld.end(),
                    [&](const auto& w) { return w.term == term; });
    if (!named) {
      return level;
    }
  }
  return "the reference";
}

}  // namespace

std::optional<Finding> settings_finding(const RunReport& r) {
  // Per setting level ("cache_type=q8_0"): its relative effects on TTFT and decode rate, by the
  // prompt length they hold at where the slopes differ.
  std::map<std::string, std::vector<std::string>> said;
  std::vector<std::string> order;
  const std::pair<const char*, const char*> metrics[] = {{"ttft_ms", "TTFT"},
                                                         {"decode_tps", "decode rate"}};
  for (const auto& [metric, name] : metrics) {
    std::map<std::string, std::vector<std::string>> at;
    for (const auto& e : r.analysis.effects.effects) {
      if (e.metric != metric || !e.relative || e.term.starts_with("prompt_ktokens") ||
          e.term.find(":prompt_ktokens") != std::string::npos) {
        continue;
      }
      const auto split = e.term.find('@');
      const std::string level = e.term.substr(0, split);
      std::string where;
      if (split != std::string::npos) {
        const std::string cell = e.term.substr(split + 1);
        where = cell.starts_with("prompt_tokens=")
                    ? fmt::format(" at {} tokens", grouped(std::stoll(cell.substr(14))))
                    : " at " + cell;
      }
      at[level].push_back(fmt::format("{} % [{}, {}]{}", signed_number(e.estimate),
                                      signed_number(e.ci.lower), signed_number(e.ci.upper), where));
    }
    for (auto& [level, parts] : at) {
      if (said.count(level) == 0) {
        order.push_back(level);
      }
      said[level].push_back(fmt::format("{} {}", name, fmt::format("{}", fmt::join(parts, ", "))));
    }
  }
  std::vector<std::string> sentences;
  for (const auto& level : order) {
    const std::string factor = level.substr(0, level.find('='));
    sentences.push_back(fmt::format("{} against {}: {} (95 % CIs)",
                                    level.substr(level.find('=') + 1), reference_of(r, factor),
                                    fmt::join(said[level], "; ")));
  }
  std::set<std::string> withheld;
  for (const auto& w : r.analysis.effects.withheld) {
    if (said.count(w.term) == 0 && withheld.insert(w.term).second) {
      sentences.push_back(fmt::format("{} gets no interval yet: {}", w.term, w.reason));
    }
  }
  if (sentences.empty()) {
    return std::nullopt;
  }
  return Finding{"settings", fmt::format("{}.", fmt::join(sentences, ". "))};
}

std::optional<Finding> edit_finding(const RunReport& r) {
  std::vector<std::string> parts;
  for (const auto& p : r.prefix.positions) {
    if (!p.prompt_ms_ratio) {
      continue;
    }
    std::string part =
        fmt::format("{} at edit position {}", finding_number(*p.prompt_ms_ratio), p.edit_position);
    if (p.prompt_ms_ci) {
      part += fmt::format(" {}", bracket(p.prompt_ms_ci->lower, p.prompt_ms_ci->upper));
    }
    parts.push_back(part);
  }
  if (parts.empty()) {
    return std::nullopt;
  }
  return Finding{"edit",
                 fmt::format("Resending a prompt with one edit took this share of a cold read's "
                             "server prompt time (median, 95 % CI): {}; what the edit leaves "
                             "before it is read from the cache.",
                             joined(parts))};
}

std::optional<Finding> memory_finding(const RunReport& r) {
  std::vector<std::string> parts;
  std::set<std::pair<std::string, std::uint64_t>> seen;
  double grew = -1;
  for (const auto& b : r.memory.blocks) {
    if (b.rss_after_load_bytes && b.rss_after_longest_bytes) {
      grew = std::max(grew, (static_cast<double>(*b.rss_after_longest_bytes) -
                             static_cast<double>(*b.rss_after_load_bytes)) /
                                kFindingMiB);
    }
    if (!b.kv_logged_bytes && !b.kv_arithmetic_bytes) {
      continue;
    }
    if (!seen.insert({b.cache_type, b.cells}).second || parts.size() >= 4) {
      continue;
    }
    const auto mib = [](std::uint64_t v) {
      return finding_number(static_cast<double>(v) / kFindingMiB);
    };
    std::string part =
        fmt::format("{} MiB for {} cells at {}",
                    b.kv_logged_bytes ? mib(*b.kv_logged_bytes) : mib(*b.kv_arithmetic_bytes),
                    grouped(static_cast<long long>(b.cells)), b.cache_type);
    if (b.kv_logged_bytes && b.kv_arithmetic_bytes) {
      // The log prints MiB with two decimals: within half of the last one, they agree.
      const auto diff = *b.kv_logged_bytes > *b.kv_arithmetic_bytes
                            ? *b.kv_logged_bytes - *b.kv_arithmetic_bytes
                            : *b.kv_arithmetic_bytes - *b.kv_logged_bytes;
      part += diff <= kLoggedMibHalfStep
                  ? " (as the arithmetic says)"
                  : fmt::format(" (the arithmetic says {})", mib(*b.kv_arithmetic_bytes));
    } else if (!b.kv_logged_bytes) {
      part += " (by the arithmetic; the server logged none)";
    }
    part += halves_text(b);
    parts.push_back(part);
  }
  if (parts.empty() && grew < 0) {
    return std::nullopt;
  }
  std::string text = parts.empty() ? "" : fmt::format("The KV cache took {}", joined(parts));
  if (grew >= 0) {
    text += fmt::format(
        "{}the server's resident memory grew {} MiB from load to its longest "
        "prompt",
        text.empty() ? "The " : "; ", finding_number(grew));
    if (text.starts_with("The the")) {
      text = "The" + text.substr(7);
    }
  }
  return Finding{"memory", text + "."};
}

std::optional<Finding> proof_finding(const RunReport& r) {
  std::vector<std::string> parts;
  const auto& c = r.cache;
  if (c.predicted > 0) {
    if (c.matched_expected == c.predicted && c.prompt_cache_hits == 0 && c.unexpected == 0) {
      parts.push_back(fmt::format(
          "every one of the {} timed calls reused exactly the tokens predicted, so each was "
          "proven a cold read past its unique first line",
          c.predicted));
    } else {
      parts.push_back(fmt::format(
          "{} of {} timed calls reused exactly the tokens predicted; {} read past their unique "
          "first line from the cache and {} reused more than predicted (the calls are flagged)",
          c.matched_expected, c.predicted, c.prompt_cache_hits, c.unexpected));
    }
  } else if (c.timed_ok > 0) {
    parts.push_back(fmt::format(
        "the server reported its reuse on {} timed calls but gives no token ids, so none was "
        "predicted to prove; {} read past their unique first line",
        c.timed_ok, c.prompt_cache_hits));
  }
  if (r.workload.present) {
    parts.insert(parts.end(), r.workload.proof.begin(), r.workload.proof.end());
  }
  if (parts.empty()) {
    if (r.analysis.timed_ok == 0) {
      return std::nullopt;
    }
    parts.push_back("the server reports no reuse counts, so no call could be proven cold");
  }
  return Finding{"proof", fmt::format("Proof: {}.", fmt::join(parts, "; "))};
}

}  // namespace kvbench::report::findings_text
