// The report layer's side of the table of workloads (workload.h), compiled into the report
// module.

#include <cstddef>
#include <string>
#include <variant>

#include "harness/report/workload_section.h"
#include "harness/scenario/parse_detail.h"
#include "harness/workloads/workload.h"

namespace kvbench::report {

using nlohmann::json;

namespace {

// The workload a run ran, by the name its resolved scenario records (a top-level key, as
// run.json writes a conversation, or under "workload"), with its settings as recorded there, read
// by the workload's own parse (without the files they name: a report reads the run's files only);
// the first, the sweep, when none. A setting that does not parse keeps its default, as one an
// earlier version did not record.
template <std::size_t I = 0>
workloads::Workload recorded(const json& scenario) {
  if constexpr (I == std::variant_size_v<workloads::Workload>) {
    return workloads::Workload{};
  } else {
    using W = std::variant_alternative_t<I, workloads::Workload>;
    const std::string name(W::kName);
    if (!scenario.is_object()) {
      return workloads::Workload{};
    }
    const json chosen = scenario.value("workload", json::object());
    const bool top = scenario.contains(name);
    if (!top && !(chosen.is_object() && chosen.contains(name))) {
      return recorded<I + 1>(scenario);
    }
    const json& v = top ? scenario[name] : chosen[name];
    const std::string path = top ? name : "workload." + name;
    W w;
    if (v.is_object()) {
      scenario::detail::Checker c("run.json", "");
      c.set_workload_path(path);
      c.skip_files();
      workloads::parse(c, v, path, w);
    }
    return w;
  }
}

}  // namespace

WorkloadSection workload_section(const results::RunManifest& run,
                                 const std::vector<CallRecord>& calls) {
  return std::visit([&](const auto& w) { return report_section(w, run, calls); },
                    recorded(run.scenario));
}

}  // namespace kvbench::report
