#include "harness/report/summary.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/analysis/analysis.h"
#include "harness/core/error.h"
#include "harness/report/concurrency.h"
#include "harness/report/effects.h"
#include "harness/report/lesson_figures.h"
#include "harness/report/memory.h"
#include "harness/report/prefix.h"
#include "harness/stats/descriptive.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

std::string cell(const Quartiles& q, int precision) {
  if (q.n == 0) {
    return "-";
  }
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", q.median, precision, q.q1, precision, q.q3,
                     precision);
}

std::string opt(const std::optional<double>& v) {
  return v ? fmt::format("{:.3f}", *v) : "";
}
std::string opt(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "";
}

json q_json(const Quartiles& q) {
  return {{"n", q.n}, {"q1", q.q1}, {"median", q.median}, {"q3", q.q3}};
}

// One column of the condition table, as every printer shows it: a count or a text, or the
// quartiles of a metric (Markdown "median [q1, q3]" at `precision` decimals; CSV three columns
// <key>_median, <key>_q1, <key>_q3; JSON {n, q1, median, q3}).
struct Column {
  std::string key;     // CSV header and JSON member
  std::string header;  // Markdown header
  bool numeric = true;
  std::function<long long(const ConditionSummary&)> count;
  std::function<std::string(const ConditionSummary&)> text;
  std::string metric;  // a metric's key: the column holds its quartiles
  int precision = 1;
  bool markdown = true;
  bool csv = true;
  bool json = true;
  bool variants_only = false;  // shown only when the run compares server variants
};

Column count_column(std::string key, std::string header,
                    std::function<long long(const ConditionSummary&)> count) {
  Column c;
  c.key = std::move(key);
  c.header = std::move(header);
  c.count = std::move(count);
  return c;
}

Column text_column(std::string key, std::string header,
                   std::function<std::string(const ConditionSummary&)> text) {
  Column c;
  c.key = std::move(key);
  c.header = std::move(header);
  c.numeric = false;
  c.text = std::move(text);
  return c;
}

// The header of a metric's column, in the table's words.
std::string metric_header(const analysis::Metric& m) {
  if (m.key == "ttft_ms") {
    return "TTFT ms";
  }
  if (m.key == "server_prompt_ms") {
    return "server prompt ms";
  }
  return m.key == "decode_tps" ? "decode tok/s" : "server decode tok/s";
}

const std::vector<Column>& condition_columns() {
  using C = const ConditionSummary&;
  static const std::vector<Column> kColumns = [] {
    std::vector<Column> c;
    c.push_back(text_column("variant", "variant", [](C r) { return r.variant; }));
    c.back().variants_only = true;
    c.push_back(count_column("num_ctx", "num_ctx", [](C r) { return r.num_ctx; }));
    c.push_back(text_column("cache_type", "cache", [](C r) { return r.cache_type; }));
    c.push_back(
        count_column("prompt_tokens", "prompt tokens", [](C r) { return r.prompt_tokens; }));
    c.push_back(count_column("calls", "calls", [](C r) { return r.calls; }));
    c.back().markdown = c.back().csv = false;  // JSON: every timed call, failed ones too
    c.push_back(count_column("n", "n", [](C r) { return r.calls - r.failed; }));
    c.push_back(count_column("failed", "failed", [](C r) { return r.failed; }));
    for (const auto& m : analysis::metrics()) {
      Column q;
      q.key = q.metric = m.key;
      q.header = metric_header(m);
      q.numeric = false;
      q.precision = m.unit == "ms" ? 1 : 2;
      c.push_back(q);
    }
    c.push_back(count_column("max_cache_n", "max cache_n", [](C r) { return r.max_cache_n; }));
    c.push_back(count_column("flagged", "flagged", [](C r) { return r.flagged; }));
    return c;
  }();
  return kColumns;
}

bool any_variant(const std::vector<ConditionSummary>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const auto& c) { return !c.variant.empty(); });
}

void write_conditions_markdown(std::ostream& out, const std::vector<ConditionSummary>& rows) {
  const bool variants = any_variant(rows);
  std::string header;
  std::string rule;
  for (const auto& col : condition_columns()) {
    if (col.markdown && (variants || !col.variants_only)) {
      header += "| " + col.header + " ";
      rule += col.numeric ? "|---:" : "|---";
    }
  }
  out << header << "|\n" << rule << "|\n";
  for (const auto& c : rows) {
    for (const auto& col : condition_columns()) {
      if (!col.markdown || (col.variants_only && !variants)) {
        continue;
      }
      const std::string v = !col.metric.empty() ? cell(*c.of(col.metric), col.precision)
                            : col.count         ? std::to_string(col.count(c))
                                                : col.text(c);
      out << "| " << v << " ";
    }
    out << "|\n";
  }
}

}  // namespace

std::vector<std::string> shortfalls(const RunReport& report) {
  std::vector<std::string> out;
  for (const auto& b : report.run.blocks) {
    if (b.error) {
      out.push_back(fmt::format("block {} (num_ctx {}, {}{}) never started: {}", b.index, b.num_ctx,
                                b.cache_type, b.variant.empty() ? "" : ", " + b.variant, *b.error));
    }
  }
  int timed = 0;
  int failed = 0;
  for (const auto& r : report.calls) {
    if (r.kind == CallKind::timed && r.outcome != Outcome::aborted) {  // aborted: interrupted
      ++timed;
      failed += r.ok() ? 0 : 1;
    }
  }
  if (timed > 0 && failed == timed) {
    out.push_back(fmt::format("all {} timed calls failed: nothing was measured", timed));
  } else if (timed > 0 && static_cast<double>(failed) > 0.10 * timed) {
    out.push_back(
        fmt::format("{} of {} timed calls failed ({:.0f} %, more than the 10 % the "
                    "validity rules allow)",
                    failed, timed, 100.0 * failed / timed));
  } else if (timed == 0 && !report.calls.empty()) {
    out.push_back("no timed call was recorded: nothing was measured");
  }
  return out;
}

RunReport build_report(results::RunManifest run, std::vector<CallRecord> calls,
                       std::vector<std::string> warnings, const std::vector<json>& answers) {
  RunReport r;
  r.run = std::move(run);
  r.calls = std::move(calls);
  r.warnings = std::move(warnings);
  // Conversation turns have a report of their own: the analyses of single prompts leave them out.
  std::vector<CallRecord> single;
  for (const auto& c : r.calls) {
    if (!c.turn) {
      single.push_back(c);
    }
  }
  r.conditions = analysis::summarize_conditions(single);
  r.cache = analysis::check_cache(single);
  r.counters = analysis::check_counters(r.run, r.calls);
  r.analysis = analysis::analyze(single, r.run.seed(), baseline_variant(r.run));
  r.memory = analysis::analyze_memory(r.run);
  r.prefix = analysis::prefix_report(single, lesson_figures());
  r.conversation = conversation_report(r.run, r.calls);
  if (!answers.empty()) {
    const json a = r.run.scenario.value("answers", json::object());
    r.answers = analysis::analyze_answers(answers, a.value("reference", std::string("f16")));
  }
  return r;
}

namespace {

// The KV bytes per token a block's server logged at load, or 0.
double kv_bytes_per_token(const results::RunManifest& run, const std::string& type, int num_ctx,
                          const std::string& variant) {
  for (const auto& b : run.blocks) {
    if (b.cache_type == type && b.num_ctx == num_ctx && b.variant == variant) {
      const double bytes = b.get<double>("kv_bytes_logged", 0.0);
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

void write_answer_types(std::ostream& out, const RunReport& report);

void write_answers_markdown(std::ostream& out, const RunReport& report) {
  const auto& a = report.answers;
  if (!a.present) {
    return;
  }
  const json spec = report.run.scenario.value("answers", json::object());
  out << "\n## Does the cache type change the answers?\n\n";
  out << fmt::format(
      "{} prompts of about {} tokens, each answered with {} tokens greedily (temperature 0, seed "
      "{}, the prompt read afresh) once by each block's server; each type against {} in blocks "
      "of the same num_ctx. Divergence: the mean total variation of the top-{} distributions over "
      "the positions before the first difference (where both read the same context); a token "
      "missing from a list counts as 0 there, and each list's remaining mass is one more "
      "bucket.\n\n",
      a.prompts, spec.value("prompt_tokens", 0), spec.value("tokens", 0),
      report.run.scenario.value("seed", 0), a.reference, spec.value("top_k", 0));
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

json counters_json(const std::vector<analysis::CounterCheck>& checks) {
  json out = json::array();
  for (const auto& c : checks) {
    out.push_back(analysis::to_json(c));
  }
  return out;
}

// The server's counters beside the calls, in one sentence per counter over all blocks.
void write_counters_markdown(std::ostream& out, const std::vector<analysis::CounterCheck>& checks) {
  std::vector<std::string> metrics;
  for (const auto& c : checks) {
    if (std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end()) {
      metrics.push_back(c.metric);
    }
  }
  for (const auto& m : metrics) {
    int blocks = 0;
    int agree = 0;
    double server = 0;
    long long calls = 0;
    std::string what;
    std::string calls_what;
    std::vector<int> differ;
    for (const auto& c : checks) {
      if (c.metric == m) {
        ++blocks;
        agree += c.agree() ? 1 : 0;
        server += c.server;
        calls += c.calls;
        what = c.what;
        calls_what = c.calls_what;
        if (!c.agree()) {
          differ.push_back(c.block);
        }
      }
    }
    out << fmt::format(
        "\nServer counters: `{}` ({}) changed by {:.0f} over {} block{}; the calls' {} sum to {}: ",
        m, what, server, blocks, blocks == 1 ? "" : "s", calls_what, calls);
    if (differ.empty()) {
      out << "they agree in every block.\n";
    } else {
      out << fmt::format("they differ in block{} {}.\n", differ.size() == 1 ? "" : "s",
                         fmt::join(differ, ", "));
    }
  }
}

}  // namespace

void write_markdown(std::ostream& out, const RunReport& report) {
  const results::RunManifest& run = report.run;
  const auto& calls = report.calls;
  const auto or_unknown = [](const std::string& s) { return s.empty() ? std::string("?") : s; };
  out << fmt::format("# kvbench run: {}\n\n", run.scenario.value("name", "?"));
  out << fmt::format("- run id `{}`, {} ({} to {})\n", or_unknown(run.run_id),
                     or_unknown(run.status), or_unknown(run.started), or_unknown(run.finished));
  const json server = run.server.is_object() ? run.server : json::object();
  std::string version = server.value("version", "");
  version = version.substr(0, version.find('\n'));
  out << fmt::format("- server: {} ({}){}\n", server.value("kind", "?"), server.value("mode", "?"),
                     version.empty() ? "" : ", " + version);
  const json model = run.model.is_object() ? run.model : json::object();
  out << fmt::format("- model: {}\n", model.value("name", model.value("path", "?")));
  const json m = run.machine.is_object() ? run.machine : json::object();
  if (!m.empty()) {
    out << fmt::format("- machine: {}, {} logical cores\n", m.value("cpu_model", "?"),
                       m.value("logical_cores", 0));
  }
  if (!run.labels.empty()) {
    std::vector<std::string> items;
    for (const auto& [name, value] : run.labels) {
      items.push_back(name + "=" + value);
    }
    out << fmt::format("- labels: {}\n", fmt::join(items, ", "));
  }
  std::vector<std::string> machine_warnings;
  for (const auto& b : run.blocks) {
    for (const auto& w : b.object("machine_state").value("warnings", json::array())) {
      if (w.is_string() && std::find(machine_warnings.begin(), machine_warnings.end(),
                                     w.get<std::string>()) == machine_warnings.end()) {
        machine_warnings.push_back(w.get<std::string>());
      }
    }
  }
  for (const auto& w : machine_warnings) {
    out << "- machine: " << w << "\n";
  }
  int failed = 0;
  int flagged = 0;
  int aborted = 0;
  for (const auto& r : calls) {
    aborted += r.outcome == Outcome::aborted ? 1 : 0;
    failed += r.ok() || r.outcome == Outcome::aborted ? 0 : 1;
    flagged += r.flags.empty() ? 0 : 1;
  }
  out << fmt::format("- calls: {} recorded, {} failed, {} flagged\n", calls.size(), failed,
                     flagged);
  if (aborted > 0) {
    out << fmt::format(
        "- interrupted: {} {} cut off in flight (recorded as aborted); `kvbench run --resume "
        "RUN_DIR` repeats {} and runs the rest of the plan\n",
        aborted, aborted == 1 ? "call was" : "calls were", aborted == 1 ? "it" : "them");
  }
  for (const auto& why : shortfalls(report)) {
    out << "- short of the plan: " << why << "\n";
  }
  for (const auto& w : report.warnings) {
    out << "- warning: " << w << "\n";
  }
  if (const auto it = run.other.find("precision"); it != run.other.end() && it->is_object()) {
    const json& p = *it;
    const std::string achieved =
        p.contains("half_width") && p["half_width"].is_number()
            ? fmt::format("±{:.1f} %", 100 * p["half_width"].get<double>())
            : "not estimable" + (p.contains("why") ? " (" + p.value("why", "") + ")" : "");
    out << fmt::format(
        "- precision: {} of {} {} after {} set{} and {} calls, target ±{:.1f} % "
        "within {} calls: {}\n",
        p.value("effect", "?"), p.value("metric", "?"), achieved, p.value("sets", 0),
        p.value("sets", 0) == 1 ? "" : "s", p.value("calls", 0),
        100 * p.value("target_half_width", 0.0), p.value("max_calls", 0), p.value("status", "?"));
  }
  const bool singles = std::any_of(calls.begin(), calls.end(), [](const CallRecord& c) {
    return !c.turn && c.kind == CallKind::timed;
  });
  if (!singles && report.conversation.present) {
    write_counters_markdown(out, report.counters);
    write_conversation_markdown(out, report.conversation);
    write_memory_markdown(out, report.memory);
    return;
  }
  out << "\nMedian [IQR] over the timed calls of each condition.\n\n";
  write_conditions_markdown(out, report.conditions);
  const auto& cc = report.cache;
  if (cc.timed_ok == 0) {
    out << "\nPrompt cache: the server reported no reused-token count (cache_n) for any timed "
           "call, so reuse cannot be checked; the unique first lines still keep every prompt "
           "fresh.\n";
  } else if (cc.predicted == 0) {
    // Reported reuse without token ids (hosted APIs, newer Ollama): no prediction to match.
    out << fmt::format(
        "\nPrompt cache: the server reported its reused tokens on {} timed calls (at most {}); "
        "{} read past their unique first line from the cache. The server gives no token ids, "
        "so no call's reuse was predicted (a server.cache_rule with the provider's minimum "
        "predicts the fresh reads).\n",
        cc.timed_ok, cc.max_cache_n, cc.prompt_cache_hits);
  } else {
    out << fmt::format(
        "\nPrompt cache: {} of {} timed calls reused exactly the tokens their start shares with "
        "the previous prompt (at most {}); {} read past their unique first line from the cache; "
        "{} reused more than predicted.",
        cc.matched_expected, cc.predicted, cc.max_cache_n, cc.prompt_cache_hits, cc.unexpected);
    if (cc.predicted < cc.timed_ok) {
      out << fmt::format(
          " {} more reported their reuse without a prediction: the server gives no token ids, "
          "so only a fresh read's (none) is predicted.",
          cc.timed_ok - cc.predicted);
    }
    out << "\n";
  }
  if (const auto rule = server.find("cache_rule"); rule != server.end() && rule->is_object()) {
    const int least = rule->value("min_tokens", 0);
    const int step = rule->value("step", 1);
    std::string words;
    if (least > 0) {
      words = fmt::format("nothing below {} tokens", least);
    }
    if (step > 1) {
      words += fmt::format("{}whole steps of {} tokens", least > 0 ? ", then " : "", step);
    }
    out << "The predictions follow the server's caching rule (server.cache_rule): " << words
        << ".\n";
  }
  write_counters_markdown(out, report.counters);
  write_effects_markdown(out, report.analysis);
  write_concurrency_markdown(out, run);
  write_memory_markdown(out, report.memory);
  write_prefix_markdown(out, report.prefix);
  write_answers_markdown(out, report);
  write_conversation_markdown(out, report.conversation);
}

Table conditions_table(const RunReport& report) {
  const auto& rows = report.conditions;
  const bool variants = any_variant(rows);
  std::vector<Table::Column> header;
  for (const auto& col : condition_columns()) {
    if (!col.csv || (col.variants_only && !variants)) {
      continue;
    }
    if (col.metric.empty()) {
      header.push_back({col.key, static_cast<bool>(col.count)});
    } else {
      for (const char* part : {"_median", "_q1", "_q3"}) {
        header.push_back({col.key + part, true});
      }
    }
  }
  Table t(std::move(header));
  for (const auto& c : rows) {
    std::vector<std::string> cells;
    for (const auto& col : condition_columns()) {
      if (!col.csv || (col.variants_only && !variants)) {
        continue;
      }
      if (col.metric.empty()) {
        cells.push_back(col.count ? std::to_string(col.count(c)) : col.text(c));
        continue;
      }
      const Quartiles& q = *c.of(col.metric);  // no value: empty cells, not zeros
      for (const double v : {q.median, q.q1, q.q3}) {
        cells.push_back(q.n == 0 ? "" : fmt::format("{:.3f}", v));
      }
    }
    t.add_row(std::move(cells));
  }
  return t;
}

void write_conditions_csv(std::ostream& out, const RunReport& report) {
  conditions_table(report).write_csv(out);
}

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> kFormats{"md", "json", "csv", "tsv", "jsonl"};
  return kFormats;
}

void write_report(std::ostream& out, const RunReport& report, std::string_view format) {
  if (format == "md") {
    write_markdown(out, report);
  } else if (format == "json") {
    out << to_json(report).dump(2) << "\n";
  } else if (format == "csv" || format == "tsv") {
    conditions_table(report).write(out, format);
  } else if (format == "jsonl") {
    for (const auto& c : report.calls) {
      out << kvbench::to_json(c).dump() << "\n";
    }
  } else {
    throw Error(fmt::format("a report has no format '{}'", format));
  }
}

void write_calls_csv(std::ostream& out, const std::vector<CallRecord>& calls) {
  out << "seq,block,round,kind,num_ctx,cache_type,prompt_tokens,prompt_tokens_counted,t_start_s,"
         "outcome,ttft_ms,decode_tps,e2e_ms,tokens,server_prompt_n,server_cache_n,"
         "expected_cache_n,server_prompt_ms,server_predicted_n,server_predicted_ms,flags,variant,"
         "conversation,turn,conversations,reuse,history_tokens\n";
  for (const auto& r : calls) {
    std::string turn = ",,,,";  // a conversation turn's columns; empty for a single prompt
    if (r.turn) {
      turn =
          fmt::format("{},{},{},{},{}", r.turn->conversation, r.turn->turn, r.turn->conversations,
                      r.turn->reuse ? "on" : "off", opt(r.turn->history_tokens));
    }
    out << fmt::format("{},{},{},{},{},{},{},{},{:.3f},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       r.seq, r.block, r.round, to_string(r.kind), r.num_ctx, r.cache_type,
                       r.prompt_tokens, opt(r.prompt_tokens_counted), r.t_start_s,
                       to_string(r.outcome), opt(r.client.ttft_ms), opt(r.client.decode_tps),
                       opt(r.client.e2e_ms), r.client.tokens, opt(r.server.prompt_n),
                       opt(r.server.cache_n), opt(r.expected_cache_n), opt(r.server.prompt_ms),
                       opt(r.server.predicted_n), opt(r.server.predicted_ms),
                       fmt::join(r.flags, ";"), r.variant, turn);
  }
}

json to_json(const RunReport& report) {
  json conds = json::array();
  const bool variants = any_variant(report.conditions);
  for (const auto& c : report.conditions) {
    json cj = json::object();
    for (const auto& col : condition_columns()) {
      if (!col.json || (col.variants_only && (!variants || c.variant.empty()))) {
        continue;
      }
      cj[col.key] = !col.metric.empty() ? q_json(*c.of(col.metric))
                    : col.count         ? json(col.count(c))
                                        : json(col.text(c));
    }
    conds.push_back(cj);
  }
  const auto& cache = report.cache;
  json out = {{"schema", "kvbench.report"},
              {"schema_version", 1},
              {"conditions", conds},
              {"prompt_cache",
               {{"timed_ok", cache.timed_ok},
                {"predicted", cache.predicted},
                {"matched_expected", cache.matched_expected},
                {"max_cache_n", cache.max_cache_n},
                {"prompt_cache_hits", cache.prompt_cache_hits},
                {"unexpected", cache.unexpected}}},
              {"server_counters", counters_json(report.counters)},
              {"memory", memory_json(report.memory)},
              {"prefix_reuse", prefix_to_json(report.prefix)},
              {"run", json(report.run)},
              {"analysis", report.analysis}};
  if (report.answers.present) {
    out["answers"] = report.answers.to_json();
  }
  if (report.conversation.present) {
    out["conversation"] = to_json(report.conversation);
  }
  return out;
}

}  // namespace kvbench::report
