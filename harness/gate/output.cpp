#include "harness/gate/output.h"

#include <cmath>

#include <fmt/format.h>

#include "harness/core/text.h"

namespace kvbench::gate {

namespace {

std::string verdict_text(stats::Verdict v) {
  return nlohmann::json(v).get<std::string>();
}

// The units: calls, and the server starts (blocks) whose spread within their counterbalanced
// units (A B B A) the degrees of freedom rest on.
std::string interleaved_numbers(const stats::GateResult& r, std::size_t n, std::size_t blocks,
                                std::size_t units) {
  const bool higher = r.better == stats::Better::higher;
  const double change = std::expm1(higher ? -r.slowdown : r.slowdown);
  const double change_lo = std::expm1(higher ? -r.upper : r.lower);
  const double change_hi = std::expm1(higher ? -r.lower : r.upper);
  const std::string holm =
      r.holm_alpha > 0.0 ? fmt::format("Holm α={:.4g}", r.holm_alpha) : "Holm: not reached";
  return fmt::format(
      "change {:+.1f} % [{:+.1f}, {:+.1f}] ({:.0f} % CI); slowdown [{:+.1f}, {:+.1f}] % vs margin "
      "{:.1f} % (n={} calls in {} server starts{}, df={:.0f}, {})",
      100 * change, 100 * change_lo, 100 * change_hi, 100 * (1 - 2 * r.alpha),
      100 * r.slowdown_lower, 100 * r.slowdown_upper, 100 * r.margin, n, blocks,
      units > 1 ? fmt::format(" in {} counterbalanced groups", units) : "", r.df, holm);
}

const char* junit_status(stats::Verdict v) {
  return v == stats::Verdict::pass ? "passed" : v == stats::Verdict::fail ? "failed" : "undecided";
}

}  // namespace

std::vector<ReportRow> report_rows(const RunGate& g) {
  std::vector<ReportRow> rows;
  for (const auto& e : g.entries) {
    ReportRow row;
    row.metric = e.metric;
    row.condition = condition_label(e.where);
    row.comparison = e.candidate + " vs " + g.baseline;
    row.verdict = e.verdict;
    row.numbers = e.result
                      ? interleaved_numbers(*e.result, e.n, e.block ? e.block->blocks : 0,
                                            e.block ? e.block->units : 0)
                      : fmt::format("no estimate (n={}, margin {:.1f} %)", e.n, 100 * e.margin);
    row.reason = e.reason;
    if (e.verdict == stats::Verdict::fail && !e.validity.empty()) {
      row.reason = "the run breaks a validity rule: " + e.validity.front().message;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

int exit_code(stats::Verdict overall, bool inconclusive_fails) {
  switch (overall) {
    case stats::Verdict::pass:
      return 0;
    case stats::Verdict::fail:
      return 1;
    case stats::Verdict::inconclusive:
      break;
  }
  return inconclusive_fails ? 3 : 0;
}

void write_lines(std::ostream& out, const GateReport& r) {
  for (const auto& row : r.rows) {
    out << fmt::format("{} {} {} ({}): {}", verdict_text(row.verdict), row.metric, row.comparison,
                       row.condition, row.numbers);
    if (!row.reason.empty()) {
      out << " -- " << row.reason;
    }
    out << "\n";
  }
  std::string tail;
  if (r.overall == stats::Verdict::inconclusive) {
    tail = r.inconclusive_fails ? " (fails the gate)" : " (warning only)";
  }
  out << "gate: " << verdict_text(r.overall) << tail << "\n";
}

void write_markdown(std::ostream& out, const GateReport& r) {
  out << "## " << r.title << "\n\n";
  out << fmt::format("**Verdict: {}**", verdict_text(r.overall));
  if (r.overall == stats::Verdict::inconclusive) {
    out << (r.inconclusive_fails ? " (fails the gate)" : " (warning only)");
  }
  out << "\n\n| verdict | metric | condition | comparison | effect and interval | note |\n";
  out << "|---|---|---|---|---|---|\n";
  for (const auto& row : r.rows) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} |\n", verdict_text(row.verdict), row.metric,
                       row.condition, row.comparison, row.numbers, row.reason);
  }
  out << "\n";
  for (const auto& n : r.notes) {
    out << "- " << n << "\n";
  }
  if (!r.notes.empty()) {
    out << "\n";
  }
}

void write_junit(std::ostream& out, const GateReport& r) {
  int failures = 0;
  int skipped = 0;
  for (const auto& row : r.rows) {
    const bool fails = row.verdict == stats::Verdict::fail ||
                       (row.verdict == stats::Verdict::inconclusive && r.inconclusive_fails);
    failures += fails ? 1 : 0;
    skipped += row.verdict == stats::Verdict::inconclusive && !r.inconclusive_fails ? 1 : 0;
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      "<testsuites name=\"kvbench gate\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
      r.rows.size(), failures, skipped);
  out << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
                     xml_escape(r.title), r.rows.size(), failures, skipped);
  for (const auto& row : r.rows) {
    const auto name = fmt::format("{} [{}] {}", row.metric, row.condition, row.comparison);
    const auto message =
        xml_escape(fmt::format("{} {}: {}{}", verdict_text(row.verdict), name, row.numbers,
                               row.reason.empty() ? "" : " -- " + row.reason));
    out << fmt::format("    <testcase classname=\"kvbench.gate.{}\" name=\"{}\">",
                       xml_escape(r.mode), xml_escape(name));
    if (row.verdict == stats::Verdict::fail ||
        (row.verdict == stats::Verdict::inconclusive && r.inconclusive_fails)) {
      out << fmt::format("<failure type=\"{}\" message=\"{}\">{}</failure>",
                         junit_status(row.verdict), message, message);
    } else if (row.verdict == stats::Verdict::inconclusive) {
      out << fmt::format("<skipped message=\"{}\"/>", message);
    } else {
      out << fmt::format("<system-out>{}</system-out>", message);
    }
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
}

nlohmann::json report_json(const GateReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    rows.push_back({{"metric", row.metric},
                    {"condition", row.condition},
                    {"comparison", row.comparison},
                    {"verdict", row.verdict},
                    {"summary", row.numbers},
                    {"reason", row.reason}});
  }
  return {{"schema", "kvbench.gate"},
          {"schema_version", 1},
          {"title", r.title},
          {"mode", r.mode},
          {"overall", r.overall},
          {"inconclusive_fails", r.inconclusive_fails},
          {"exit_code", exit_code(r.overall, r.inconclusive_fails)},
          {"rows", rows},
          {"notes", r.notes},
          {"details", r.details}};
}

}  // namespace kvbench::gate
