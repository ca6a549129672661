#include "harness/session/run_inputs.h"

#include "harness/core/error.h"
#include "harness/session/host.h"

namespace kvbench::session {

RunInputs load_run_inputs(const std::filesystem::path& dir) {
  RunInputs in;
  in.dir = dir;
  in.loaded = results::load_run(dir);
  const auto& run = in.loaded.run;
  if (!run.scenario.is_object() || run.scenario.empty()) {
    throw InputError((dir / "run.json").string() + ": no \"scenario\" object: not a kvbench run");
  }
  in.scenario = scenario::parse_scenario(run.scenario.dump(), (dir / "run.json").string());
  for (const auto& v : in.scenario.variants) {
    in.variants.push_back(v.name);
  }
  // With variants, each block repeat is one counterbalanced set (ABBA...); extend_run raises it.
  in.sets = in.scenario.variants.empty() ? 1 : in.scenario.block_repeats;
  in.session.run_id = run.run_id;
  in.session.recorded_at = run.started;
  in.session.scenario_name = in.scenario.name;
  in.session.scenario_hash = run.scenario_hash;
  in.session.git_revision = run.kvbench.git_revision;
  in.session.host = host_fingerprint(run);
  in.session.machine = in.session.host.hostname + " / " + in.session.host.cpu_model;
  in.session.run_dir = std::filesystem::absolute(dir).lexically_normal().string();
  for (const auto& [name, value] : run.labels) {
    in.session.run_labels += (in.session.run_labels.empty() ? "" : ", ") + name + "=" + value;
  }
  in.session.host_class = host_class(in.session.host);
  in.session.calls_digest = calls_digest(in.loaded.calls);
  in.session.calls = static_cast<std::int64_t>(in.loaded.calls.size());
  if (in.session.run_id.empty() || in.session.scenario_hash.empty()) {
    throw InputError((dir / "run.json").string() + ": no run_id or scenario_hash");
  }
  return in;
}

}  // namespace kvbench::session
