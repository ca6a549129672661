#pragma once
// One plot of a run's page, as data: the page's script draws it (html.h), and a workload's
// section brings its own (workload_section.h).

#include <string>
#include <utility>
#include <vector>

namespace kvbench::report {

struct PlotSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;
  bool line = false;    // a line through the points (a fit, a reference), not data
  bool dashed = false;  // drawn dashed
  std::string marker;   // Chart.js point style; empty: a circle
  int colour = -1;      // an index into the page's colours; -1: the series' own place
};

struct Plot {
  std::string id;  // the canvas is plot-<id>
  std::string title;
  std::string caption;
  std::string x_label;
  std::string y_label;
  bool y_zero = true;  // the y axis starts at zero
  std::vector<PlotSeries> series;
};

}  // namespace kvbench::report
