// The condition table, one row per condition (configuration and prompt length), as every printer
// shows it: its columns are listed once and the Markdown, CSV and JSON forms read them.

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

std::string cell(const Quartiles& q, int precision) {
  if (q.n == 0) {
    return "-";
  }
  return fmt::format("{:.{}f} [{:.{}f}, {:.{}f}]", q.median, precision, q.q1, precision, q.q3,
                     precision);
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
  // Shown only where a row has it (a variant, a batch size): empty, always.
  std::function<bool(const ConditionSummary&)> has;
};

// Whether `col` is in the table of `rows`: always, or where one row has it.
bool shown(const Column& col, const std::vector<ConditionSummary>& rows) {
  return !col.has || std::any_of(rows.begin(), rows.end(), col.has);
}

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
    c.back().has = [](C r) { return !r.variant.empty(); };
    c.push_back(count_column("num_ctx", "num_ctx", [](C r) { return r.num_ctx; }));
    c.push_back(text_column("cache_type", "cache", [](C r) { return r.cache_type; }));
    c.push_back(count_column("batch_size", "batch", [](C r) { return r.batch_size.value_or(0); }));
    c.back().has = [](C r) { return r.batch_size.has_value(); };
    c.push_back(
        count_column("ubatch_size", "ubatch", [](C r) { return r.ubatch_size.value_or(0); }));
    c.back().has = [](C r) { return r.ubatch_size.has_value(); };
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

}  // namespace

void write_conditions_markdown(std::ostream& out, const std::vector<ConditionSummary>& rows) {
  std::string header;
  std::string rule;
  for (const auto& col : condition_columns()) {
    if (col.markdown && shown(col, rows)) {
      header += "| " + col.header + " ";
      rule += col.numeric ? "|---:" : "|---";
    }
  }
  out << header << "|\n" << rule << "|\n";
  for (const auto& c : rows) {
    for (const auto& col : condition_columns()) {
      if (!col.markdown || !shown(col, rows)) {
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

Table conditions_table(const RunReport& report) {
  const auto& rows = report.conditions;
  std::vector<Table::Column> header;
  for (const auto& col : condition_columns()) {
    if (!col.csv || !shown(col, rows)) {
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
      if (!col.csv || !shown(col, rows)) {
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

json conditions_json(const std::vector<ConditionSummary>& rows) {
  json conds = json::array();
  for (const auto& c : rows) {
    json cj = json::object();
    for (const auto& col : condition_columns()) {
      if (!col.json || (col.has && !col.has(c))) {
        continue;
      }
      cj[col.key] = !col.metric.empty() ? q_json(*c.of(col.metric))
                    : col.count         ? json(col.count(c))
                                        : json(col.text(c));
    }
    conds.push_back(cj);
  }
  return conds;
}

}  // namespace kvbench::report
