#pragma once
// The scenario `run` and `repeat` measure: the file or the quick start edited by the flags and
// the server options, with an attached server's kind asked of the server (servers/find_kind.h)
// where neither the flags nor the file name it, and checked against it where they do.

#include <string>

#include "harness/run/runner.h"
#include "harness/scenario/edits.h"
#include "harness/scenario/scenario.h"

namespace kvbench::cli {

// What scenario_with_flags and run::with_overrides make of `arg`, `e` and `ro`. At an attached
// server (one without variants) it asks the server what it is, prints what it found and which
// proof that allows on stderr, and keeps it in ro.found_server for run.json. Throws InputError
// (exit 2) where the stated kind is not one the server serves, and Error (exit 1) where no kind
// was stated and the server answers as none, naming what was tried.
scenario::Scenario scenario_to_run(const std::string& arg, const scenario::ScenarioEdits& e,
                                   run::RunOptions& ro);

}  // namespace kvbench::cli
