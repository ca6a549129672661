// The prompt sweep in the scenario layer. Its settings are the scenario's factors, repeats and
// max_tokens (parsed with the scenario, which checks that each prompt fits its context), so
// "workload": {"sweep": {}} takes no keys and run.json records nothing of it.

#include "harness/scenario/parse_detail.h"
#include "harness/workloads/sweep/spec.h"

namespace kvbench::workloads {

using scenario::detail::Checker;

void parse(Checker& c, const nlohmann::json& v, const std::string& path, Sweep& /*w*/) {
  if (!v.is_object()) {
    c.problem(path, fmt::format("expected {{}}: the sweep's settings are the scenario's factors, "
                                "repeats and max_tokens; got {}",
                                Checker::describe(v)));
    return;
  }
  c.keys(v, path, {});
}

void check(Checker& /*c*/, const scenario::Scenario& /*s*/, const Sweep& /*w*/) {}

void add_to_json(const Sweep& /*w*/, nlohmann::json& /*resolved*/) {}

}  // namespace kvbench::workloads
