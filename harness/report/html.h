#pragma once
// report.html: a run's page, self-contained (no network): the findings, the compact table, the
// plots and the whole report, with Chart.js (Debian's libjs-chart.js, compiled in) and the page's
// own script (page.js) inlined. The plots are computed here (report_plots) and the script only
// draws them: TTFT and server prompt time against prompt length with the headline model's line,
// decode rate against context, the drift probes over time, every call on a timeline coloured by
// condition, and what a section has to show (memory per block, reuse per turn, a trace's reuse,
// an edit's second read, answers per cache type).

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/report/plot.h"
#include "harness/report/summary.h"

namespace kvbench::report {

// The plots the run has data for, in the page's order. Pure.
std::vector<Plot> report_plots(const RunReport& report);

nlohmann::json plot_json(const Plot& plot);

// The whole page. Pure: `markdown` is the run's report.md, shown whole at the end.
void write_html(std::ostream& out, const RunReport& report, const std::string& markdown);

}  // namespace kvbench::report
