// The conversation workload in the report layer: its section, made once from the run's turns.

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "harness/report/workload_section.h"
#include "harness/workloads/conversation/report.h"
#include "harness/workloads/conversation/spec.h"

namespace kvbench::workloads {

namespace {

// The median TTFT of each turn, one series per configuration, level and reuse mode.
std::optional<report::Plot> turns_plot(const report::ConversationReport& r) {
  report::Plot p{"turns",
                 "Conversations: TTFT per turn",
                 "Median time to first token at each turn, the history reused (reuse on) or every "
                 "turn read afresh (reuse off): without reuse each turn pays for the whole "
                 "conversation again.",
                 "turn",
                 "ms",
                 true,
                 {}};
  std::map<std::string, report::PlotSeries> series;
  for (const auto& row : r.rows) {
    if (!row.ttft_ms) {
      continue;
    }
    const std::string key = fmt::format("{}, {} at once, reuse {}", row.config, row.conversations,
                                        row.reuse ? "on" : "off");
    auto& s = series[key];
    s.label = key;
    s.line = false;
    s.points.emplace_back(row.turn, *row.ttft_ms);
  }
  int colour = 0;
  for (auto& [key, s] : series) {
    s.colour = colour++;
    p.series.push_back(std::move(s));
  }
  return p.series.empty() ? std::nullopt : std::optional<report::Plot>(p);
}

}  // namespace

report::WorkloadSection report_section(const Conversation& w, const scenario::Scenario& /*s*/,
                                       const results::RunManifest& run,
                                       const std::vector<CallRecord>& calls) {
  const report::ConversationReport r = report::conversation_report(w, run, calls);
  report::WorkloadSection out;
  out.key = Conversation::kName;
  out.present = r.present;
  out.keeps_its_server = true;
  if (r.present) {
    std::ostringstream md;
    report::write_conversation_markdown(md, r);
    out.markdown = md.str();
    out.json = report::to_json(r);
    if (auto p = turns_plot(r)) {
      out.plots.push_back(std::move(*p));
    }
    if (r.predicted > 0) {
      out.proof.push_back(
          fmt::format("{} of {} conversation turns reused their history exactly as predicted",
                      r.proved, r.predicted));
    }
  }
  return out;
}

}  // namespace kvbench::workloads
