#pragma once
// The scripts report.html inlines, generated from chart.min.js (Debian's libjs-chart.js) and
// page.js at build time by embed_scripts.cmake.

namespace kvbench::report {

extern const char* const kChartJs;
extern const char* const kPageJs;

}  // namespace kvbench::report
