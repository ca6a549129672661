// The server's own counters beside the calls, in the report.

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
    double server = 0;
    long long calls = 0;
    std::string what;
    std::string calls_what;
    std::vector<int> differ;
    for (const auto& c : checks) {
      if (c.metric == m) {
        ++blocks;
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

}  // namespace kvbench::report
