#pragma once
// What the gate reads from a run folder: the calls, the scenario it ran (with its gate section and
// variants), and the facts a history stores about the session.

#include <filesystem>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/scenario/scenario.h"
#include "harness/session/session_info.h"

namespace kvbench::session {

struct RunInputs {
  std::filesystem::path dir;
  results::LoadedRun loaded;
  scenario::Scenario scenario;        // parsed back from run.json "scenario"
  std::vector<std::string> variants;  // the scenario's variant names, in order
  int sets = 1;                       // counterbalanced block sets run so far (block_repeats)
  SessionInfo session;
};

// Loads a run folder, its session facts and host fingerprint included. Throws InputError when it
// is no kvbench run or its scenario is invalid.
RunInputs load_run_inputs(const std::filesystem::path& dir);

}  // namespace kvbench::session
