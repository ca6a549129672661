// The answers section of a run's report: does the cache type change the answers, beside each
// type's KV bytes per token and decode rate.

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/analysis/analysis.h"
#include "harness/report/sections.h"
#include "harness/report/summary.h"
#include "harness/stats/descriptive.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

// The KV bytes per token a block's server logged at load, or 0.
double kv_bytes_per_token(const results::RunManifest& run, const std::string& type, int num_ctx,
                          const std::string& variant) {
  for (const auto& b : run.blocks) {
    if (b.cache_type == type && b.num_ctx == num_ctx && b.variant == variant) {
      const auto bytes = static_cast<double>(b.memory.kv_bytes_logged.value_or(0));
      const int cells = num_ctx * b.slots.value_or(1);
      if (bytes > 0 && cells > 0) {
        return bytes / cells;
      }
    }
  }
  return 0;
}

// The median client decode rate of the fresh timed calls of one configuration, or 0.
double median_decode(const std::vector<CallRecord>& calls, const std::string& type, int num_ctx,
                     const std::string& variant) {
  std::vector<double> v;
  for (const auto& r : calls) {
    if (r.kind == CallKind::timed && r.ok() && r.cache_type == type && r.num_ctx == num_ctx &&
        r.variant == variant && r.pair_role != PairRole::edited && r.client.decode_tps) {
      v.push_back(*r.client.decode_tps);
    }
  }
  return v.empty() ? 0 : stats::median(v);
}

std::string answers_or_dash(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

// One line per cache type against the reference, beside its KV bytes and decode rate.
void write_answer_types(std::ostream& out, const RunReport& report) {
  const auto& a = report.answers;
  for (const auto& t : a.types) {
    const double kv = kv_bytes_per_token(report.run, t.cache_type, t.num_ctx, t.variant);
    const double kv_ref = kv_bytes_per_token(report.run, a.reference, t.num_ctx, t.variant);
    const double dec = median_decode(report.calls, t.cache_type, t.num_ctx, t.variant);
    const double dec_ref = median_decode(report.calls, a.reference, t.num_ctx, t.variant);
    std::string costs;
    if (kv > 0 && kv_ref > 0) {
      costs += fmt::format("KV {:.0f} instead of {:.0f} B per token ({:+.0f} %), ", kv, kv_ref,
                           100 * (kv / kv_ref - 1));
    }
    if (dec > 0 && dec_ref > 0) {
      costs += fmt::format("decode {:+.1f} % (median), ", 100 * (dec / dec_ref - 1));
    }
    std::string where;
    const char* unit = t.text_only ? "byte" : "token";
    if (t.identical_answers < t.prompts) {
      where = fmt::format(", first difference at {} {} on average", unit,
                          answers_or_dash(t.mean_first_diff, "{:.0f}"));
      if (t.mean_margin) {
        where += fmt::format(", {}'s top-1 margin there {:.3g}", a.reference, *t.mean_margin);
      }
    }
    if (t.text_only) {
      out << fmt::format(
          "- **{}** (num_ctx {}{}): {}greedy answers identical to {} in {} of {} "
          "prompts{}; {:.1f} % of bytes the same (text only: this server gives no "
          "token ids or probabilities){}.\n",
          t.cache_type, t.num_ctx, t.variant.empty() ? "" : ", " + t.variant, costs, a.reference,
          t.identical_answers, t.prompts, where, 100 * t.identical_share,
          t.missing > 0 ? fmt::format(" ({} prompts without an answer)", t.missing) : "");
      continue;
    }
    out << fmt::format(
        "- **{}** (num_ctx {}{}): {}greedy answers identical to {} in {} of {} "
        "prompts{}; {:.1f} % of tokens the same; divergence before the first "
        "difference {}{}.\n",
        t.cache_type, t.num_ctx, t.variant.empty() ? "" : ", " + t.variant, costs, a.reference,
        t.identical_answers, t.prompts, where, 100 * t.identical_share,
        answers_or_dash(t.mean_divergence, "{:.4f}"),
        t.missing > 0 ? fmt::format(" ({} prompts without an answer)", t.missing) : "");
  }
}

}  // namespace

void write_answers_markdown(std::ostream& out, const RunReport& report) {
  const auto& a = report.answers;
  if (!a.present) {
    return;
  }
  const scenario::Answers& spec = report.scenario.answers;
  out << "\n## Does the cache type change the answers?\n\n";
  out << fmt::format(
      "{} prompts of about {} tokens, each answered with {} tokens greedily (temperature 0, seed "
      "{}, the prompt read afresh) once by each block's server; each type against {} in blocks "
      "of the same num_ctx. Divergence: the mean total variation of the top-{} distributions over "
      "the positions before the first difference (where both read the same context); a token "
      "missing from a list counts as 0 there, and each list's remaining mass is one more "
      "bucket.\n\n",
      a.prompts, spec.prompt_tokens, spec.tokens, report.scenario.seed, a.reference, spec.top_k);
  if (a.controls.empty()) {
    out << fmt::format(
        "Control: none ran ({} on a second server start), so a difference below "
        "may be the server's own.\n\n",
        a.reference);
  } else {
    int prompts = 0;
    int same = 0;
    for (const auto& c : a.controls) {
      prompts += c.prompts + c.missing;
      same += c.identical_answers;
    }
    if (a.deterministic) {
      out << fmt::format(
          "Control: {} on a second server start gave the same answers, token for token, in {} "
          "of {} prompts: the server is deterministic here, so a difference below is the cache "
          "type's.\n\n",
          a.reference, same, prompts);
      write_answer_types(out, report);
      return;
    }
    out << fmt::format(
        "Control: {} on a second server start gave the same answers in only {} of {} prompts: "
        "the server is not deterministic here, so the differences below cannot be laid to the "
        "cache type.\n\n",
        a.reference, same, prompts);
  }
  write_answer_types(out, report);
}

}  // namespace kvbench::report
