// Markdown and JSON renderings of the prefix-reuse analysis (prefix.h).

#include <algorithm>

#include <fmt/format.h>

#include "harness/report/prefix.h"

namespace kvbench::report {

using analysis::kRatioTolerance;
using analysis::overall_verdict;
using analysis::PairResult;
using analysis::PositionSummary;
using analysis::TrapSummary;

namespace {

using nlohmann::json;

std::string num(const std::optional<double>& v, int precision = 3) {
  return v ? fmt::format("{:.{}f}", *v, precision) : "-";
}

std::string with_ci(const std::optional<double>& v, const std::optional<stats::Interval>& ci) {
  if (!v) {
    return "-";
  }
  return ci ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", *v, ci->lower, ci->upper)
            : fmt::format("{:.3f}", *v);
}

std::string opt_int(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "-";
}

// "3 of 3 (500 of 500)": pairs whose cache_n equalled the prediction, and the medians.
std::string reuse_cell(const PositionSummary& r) {
  if (r.reuse_checked == 0) {
    return "not reported";
  }
  return fmt::format("{} of {} ({:.0f} of {:.0f})", r.reuse_matched, r.reuse_checked,
                     r.median_cache_n, r.median_expected_cache_n);
}

std::string pair_reuse(const std::optional<int>& got, const std::optional<int>& want) {
  return got ? fmt::format("{} / {}", *got, opt_int(want)) : "not reported";
}

// A token index, marked "~" with its share of the text when it was estimated (placed by text).
std::string first_diff_cell(const PairResult& p) {
  if (!p.text_fraction) {
    return opt_int(p.first_diff);
  }
  return fmt::format("~{} ({:.3f} of the text)", opt_int(p.first_diff), *p.text_fraction);
}

void write_positions(std::ostream& out, const std::vector<PositionSummary>& rows) {
  out << "| prompt tokens | edit position | pairs | first difference at | 1 - f | predicted | "
         "server prompt ms ratio [95% CI] | TTFT ratio [95% CI] | lesson | cache_n = expected | "
         "verdict |\n";
  out << "|---:|---|---:|---:|---:|---:|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       r.prompt_tokens, r.edit_position, r.pairs, num(r.first_diff_share),
                       num(r.one_minus_f, 2), num(r.expected_ratio),
                       with_ci(r.prompt_ms_ratio, r.prompt_ms_ci), with_ci(r.ttft_ratio, r.ttft_ci),
                       r.lesson_text.empty() ? "-" : r.lesson_text, reuse_cell(r), r.verdict);
  }
}

void write_pairs(std::ostream& out, const std::vector<PairResult>& pairs) {
  out << "| pair | edit position | tokens | first difference | cold prompt ms | edited prompt ms "
         "| ratio | cold TTFT ms | edited TTFT ms | ratio | cache_n / expected | cold cache_n / "
         "expected | tokens reported cold / edited |\n";
  out << "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n";
  for (const auto& p : pairs) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} |\n",
                       p.pair_id, p.edit_position, p.tokens, first_diff_cell(p),
                       num(p.cold_prompt_ms, 1), num(p.edited_prompt_ms, 1), num(p.prompt_ms_ratio),
                       num(p.cold_ttft_ms, 1), num(p.edited_ttft_ms, 1), num(p.ttft_ratio),
                       pair_reuse(p.cache_n, p.expected_cache_n),
                       pair_reuse(p.cold_cache_n, p.cold_expected_cache_n),
                       opt_int(p.cold_tokens_reported), opt_int(p.edited_tokens_reported));
  }
}

void write_checks(std::ostream& out, const std::vector<PairResult>& pairs) {
  int checked = 0;
  int matched = 0;
  int gap = 0;
  int cold_checked = 0;
  int cold_matched = 0;
  int counts = 0;
  int counts_same = 0;
  for (const auto& p : pairs) {
    if (p.cache_n && p.expected_cache_n) {
      ++checked;
      matched += *p.cache_n == *p.expected_cache_n ? 1 : 0;
      gap = std::max(gap, std::abs(*p.cache_n - *p.expected_cache_n));
    }
    if (p.cold_cache_n && p.cold_expected_cache_n) {
      ++cold_checked;
      cold_matched += *p.cold_cache_n == *p.cold_expected_cache_n ? 1 : 0;
    }
    if (p.cold_tokens_reported && p.edited_tokens_reported) {
      ++counts;
      counts_same += *p.cold_tokens_reported == *p.edited_tokens_reported ? 1 : 0;
    }
  }
  if (checked == 0) {
    const bool by_text = std::any_of(pairs.begin(), pairs.end(), [](const PairResult& p) {
      return p.text_fraction.has_value();
    });
    out << "\nReused tokens: not reported. The server gives no reused-token count (Ollama counts "
           "the whole prompt as prompt_eval_count whether it read or reused it), so reuse is "
           "inferred from time only"
        << (by_text ? "; the server gives no token ids either, so each edit was placed by text "
                      "(same byte length) and its token index (~) estimated from the length "
                      "calibration.\n"
                    : ".\n");
    out << fmt::format(
        "Token counts as the server reported them (prompt_eval_count): the same for both reads in "
        "{} of {} pairs.\n",
        counts_same, counts);
    return;
  }
  out << fmt::format(
      "\nReused tokens: in {} of {} pairs the edited read's cache_n equalled the tokens before "
      "the first difference (capped one short of the prompt: the server always re-reads one "
      "token); the largest gap was {} tokens. The cold reads reused what their start shares "
      "with the previous prompt in {} of {} pairs.\n",
      matched, checked, gap, cold_matched, cold_checked);
  out << fmt::format(
      "Token counts as the server reported them (prompt_n + cache_n): the same for both reads "
      "in {} of {} pairs; reuse shows in cache_n and in the time, not in the count.\n",
      counts_same, counts);
}

std::optional<double> median_edited_ttft(const std::vector<PairResult>& pairs,
                                         const std::string& position) {
  std::vector<double> v;
  for (const auto& p : pairs) {
    if (p.edit_position == position && p.edited_ttft_ms) {
      v.push_back(*p.edited_ttft_ms);
    }
  }
  return v.empty() ? std::nullopt : std::optional(stats::median(v));
}

void write_put_last(std::ostream& out, const std::vector<PairResult>& pairs,
                    const std::vector<PositionSummary>& rows) {
  const auto first = median_edited_ttft(pairs, "timestamp_first");
  const auto last = median_edited_ttft(pairs, "timestamp_last");
  if (!first || !last) {
    return;
  }
  auto row = [&](const char* name) {
    return std::find_if(rows.begin(), rows.end(),
                        [&](const auto& r) { return r.edit_position == name; });
  };
  out << fmt::format(
      "\nPut what changes last: with a timestamp line at the start (right after the unique first "
      "line), a resend with a new time took a median {:.1f} ms to its first token ({} of its cold "
      "read); with the timestamp as the last line, {:.1f} ms ({}). Placing the varying line last "
      "saves {:.1f} ms per call here ({:.1f}x faster).\n",
      *first, num(row("timestamp_first")->ttft_ratio), *last,
      num(row("timestamp_last")->ttft_ratio), *first - *last, *first / std::max(*last, 1e-9));
}

void write_trap(std::ostream& out, const std::vector<TrapSummary>& trap) {
  for (const auto& t : trap) {
    if (t.speedup) {
      out << fmt::format(
          "\nRepeated-prompt trap ({} tokens): {} timed calls read their prompt from the cache "
          "(the same prompt again, without a unique first line): median TTFT {:.1f} ms against "
          "{:.1f} ms for the {} read cold. The repeated \"measurement\" looks {:.1f}x faster than "
          "a real read; it measures the cache. kvbench gives every timed prompt a unique first "
          "line so that this cannot happen.\n",
          t.prompt_tokens, t.hits, *t.hit_ttft_ms, *t.cold_ttft_ms, t.cold, *t.speedup);
    } else {
      out << fmt::format(
          "\nRepeated-prompt trap ({} tokens): all {} timed calls read their prompt from the "
          "cache (median TTFT {:.1f} ms); no call of that length was read cold to compare with.\n",
          t.prompt_tokens, t.hits, *t.hit_ttft_ms);
    }
  }
}

json opt_json(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}
json opt_json(const std::optional<int>& v) {
  return v ? json(*v) : json(nullptr);
}
json ci_json(const std::optional<stats::Interval>& ci) {
  return ci ? json{{"lower", ci->lower}, {"upper", ci->upper}, {"level", ci->level}}
            : json(nullptr);
}

}  // namespace

void write_prefix_markdown(std::ostream& out, const PrefixReport& report) {
  const auto& counts = report.counts;
  const auto& pairs = report.pairs;
  const auto& rows = report.positions;
  if (counts.planned > 0) {
    out << "\n## Prefix reuse: the edit-position experiment\n\n";
    out << fmt::format(
        "{} of {} pairs complete. Each pair is a cold read of a fresh prompt, then the same "
        "prompt sent again at once to the same server slot with one change: one word at "
        "fraction f of its tokens, nothing (none), its final question line (question), or a "
        "timestamp line. Ratio = edited read / cold read. Predicted = the share of tokens the "
        "edited read must read again if everything before the first difference is reused "
        "(about 1 - f). The lesson measured Ollama on a laptop; its ratios are the shape to "
        "compare, not the times.\n\n",
        counts.complete, counts.planned);
    write_positions(out, rows);
    write_checks(out, pairs);
    out << "\nVerdict: " << overall_verdict(rows) << "\n\n";
    write_pairs(out, pairs);
    write_put_last(out, pairs, rows);
  }
  write_trap(out, report.trap);
}

nlohmann::json prefix_to_json(const PrefixReport& report) {
  const auto& pairs = report.pairs;
  const auto& rows = report.positions;
  json jp = json::array();
  for (const auto& p : pairs) {
    jp.push_back({{"pair", p.pair_id},
                  {"edit_position", p.edit_position},
                  {"prompt_tokens", p.prompt_tokens},
                  {"tokens", p.tokens},
                  {"first_diff", opt_json(p.first_diff)},
                  {"text_fraction", opt_json(p.text_fraction)},
                  {"tokens_reported_cold", opt_json(p.cold_tokens_reported)},
                  {"tokens_reported_edited", opt_json(p.edited_tokens_reported)},
                  {"prompt_ms_ratio", opt_json(p.prompt_ms_ratio)},
                  {"ttft_ratio", opt_json(p.ttft_ratio)},
                  {"expected_ratio", opt_json(p.expected_ratio)},
                  {"cache_n", opt_json(p.cache_n)},
                  {"expected_cache_n", opt_json(p.expected_cache_n)}});
  }
  json jr = json::array();
  for (const auto& r : rows) {
    jr.push_back({{"edit_position", r.edit_position},
                  {"prompt_tokens", r.prompt_tokens},
                  {"pairs", r.pairs},
                  {"one_minus_f", opt_json(r.one_minus_f)},
                  {"expected_ratio", opt_json(r.expected_ratio)},
                  {"attention_ratio", opt_json(r.attention_ratio)},
                  {"prompt_ms_ratio", opt_json(r.prompt_ms_ratio)},
                  {"prompt_ms_ci", ci_json(r.prompt_ms_ci)},
                  {"ttft_ratio", opt_json(r.ttft_ratio)},
                  {"ttft_ci", ci_json(r.ttft_ci)},
                  {"lesson_ratio", opt_json(r.lesson_ratio)},
                  {"reuse_checked", r.reuse_checked},
                  {"reuse_inferred", r.reuse_inferred},
                  {"reuse_matched", r.reuse_matched},
                  {"reuse_max_gap", r.reuse_max_gap},
                  {"consistent", r.consistent},
                  {"verdict", r.verdict}});
  }
  json jt = json::array();
  for (const auto& t : report.trap) {
    jt.push_back({{"prompt_tokens", t.prompt_tokens},
                  {"hits", t.hits},
                  {"cold", t.cold},
                  {"hit_ttft_ms", opt_json(t.hit_ttft_ms)},
                  {"cold_ttft_ms", opt_json(t.cold_ttft_ms)},
                  {"speedup", opt_json(t.speedup)}});
  }
  return {{"pairs", jp}, {"positions", jr}, {"verdict", overall_verdict(rows)}, {"trap", jt}};
}

}  // namespace kvbench::report
