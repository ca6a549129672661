#include "harness/report/html.h"

#include <sstream>

#include <fmt/format.h>

#include "harness/core/text.h"
#include "harness/report/findings.h"
#include "harness/report/page_scripts.h"
#include "harness/report/sections.h"

namespace kvbench::report {

namespace {

using nlohmann::json;

// A single prompt's condition: what its colour stands for.
void write_tables(std::ostream& out, const std::string& md) {
  std::istringstream in(md);
  std::string line;
  bool open = false;
  bool header = false;
  while (std::getline(in, line)) {
    if (!line.starts_with("|")) {
      if (open) {
        out << "</table>\n";
        open = false;
      }
      continue;
    }
    if (line.starts_with("|---") || line.starts_with("|:--")) {
      continue;
    }
    if (!open) {
      out << "<table>\n";
      open = true;
      header = true;
    }
    out << "<tr>";
    std::size_t from = 1;
    for (std::size_t at = line.find('|', from); at != std::string::npos;
         from = at + 1, at = line.find('|', from)) {
      const std::string cell = line.substr(from, at - from);
      out << (header ? "<th>" : "<td>") << xml_escape(cell) << (header ? "</th>" : "</td>");
    }
    out << "</tr>\n";
    header = false;
  }
  if (open) {
    out << "</table>\n";
  }
}

constexpr std::string_view kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em; }
ul.findings li { margin: 0.4em 0; line-height: 1.4; }
table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f3f3f3; }
figure { margin: 1.5em 0; } figcaption { font-size: 0.9em; color: #444; max-width: 900px; }
pre.report { white-space: pre-wrap; font-size: 0.8em; background: #fafafa; padding: 1em; }
#drawn { display: none; }
)";

}  // namespace

nlohmann::json plot_json(const Plot& plot) {
  json series = json::array();
  for (const auto& s : plot.series) {
    json points = json::array();
    for (const auto& [x, y] : s.points) {
      points.push_back({{"x", x}, {"y", y}});
    }
    json j = {{"label", s.label}, {"points", points}, {"line", s.line}, {"dashed", s.dashed}};
    if (!s.marker.empty()) {
      j["marker"] = s.marker;
    }
    if (s.colour >= 0) {
      j["colour"] = s.colour;
    }
    series.push_back(j);
  }
  return {{"id", plot.id},           {"title", plot.title},     {"caption", plot.caption},
          {"x_label", plot.x_label}, {"y_label", plot.y_label}, {"y_zero", plot.y_zero},
          {"datasets", series}};
}

void write_html(std::ostream& out, const RunReport& report, const std::string& markdown) {
  const std::string name = run_name(report);
  const auto found = findings(report);
  const auto plots = report_plots(report);
  out << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kvbench "
         "run: "
      << xml_escape(name) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  out << "<h1>kvbench run: " << xml_escape(name) << "</h1>\n";
  out << "<section id=\"findings\">\n<h2>What was found</h2>\n<ul class=\"findings\">\n";
  for (const auto& f : found) {
    out << "<li data-topic=\"" << xml_escape(f.topic) << "\">" << xml_escape(f.text) << "</li>\n";
  }
  out << "</ul>\n</section>\n";
  out << "<section id=\"conditions\">\n<h2>Median [IQR] over the timed calls of each "
         "condition</h2>\n";
  std::ostringstream table;
  write_conditions_markdown(table, report.conditions);
  write_tables(out, table.str());
  out << "</section>\n<section id=\"plots\">\n<h2>Plots</h2>\n";
  json data = {{"plots", json::array()}};
  for (const auto& p : plots) {
    out << "<figure>\n<canvas id=\"plot-" << xml_escape(p.id)
        << "\" width=\"960\" height=\"460\"></canvas>\n<figcaption>" << xml_escape(p.caption)
        << "</figcaption>\n</figure>\n";
    data["plots"].push_back(plot_json(p));
  }
  if (plots.empty()) {
    out << "<p>The run has nothing to plot.</p>\n";
  }
  out << "</section>\n<section id=\"report\">\n<h2>The whole report</h2>\n<details open>"
         "<summary>report.md</summary>\n<pre class=\"report\">"
      << xml_escape(markdown) << "</pre>\n</details>\n</section>\n<pre id=\"drawn\"></pre>\n";
  // JSON inside a script element: "</" would end it.
  std::string text = data.dump();
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2)) {
    text.replace(at, 2, "<\\/");
  }
  out << "<script id=\"kvbench-data\" type=\"application/json\">" << text << "</script>\n";
  out << "<script>\n" << kChartJs << "\n</script>\n<script>\n" << kPageJs << "\n</script>\n";
  out << "</body>\n</html>\n";
}

}  // namespace kvbench::report
