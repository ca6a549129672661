#pragma once
// Pieces shared by kvbench gate and kvbench history: the gate options, their overrides of a
// scenario's gate section, and the writing of the verdict for CI.

#include <filesystem>
#include <string>
#include <vector>

#include "harness/cli/server_options.h"
#include "harness/gate/output.h"
#include "harness/scenario/gate_config.h"

namespace kvbench::cli {

struct GateCliOptions {
  std::string scenario;
  std::string run_dir;
  std::string baseline;
  std::string candidate;
  std::string history;
  bool any_host = false;  // compare with every host class, not only the run's own
  ServerCliOptions server;
  std::vector<std::string> margins;
  double alpha = 0.0;  // 0: the scenario's
  std::string on_inconclusive;
  std::string junit;
  std::string json;
  std::string markdown;
  std::string format = "text";  // what stdout carries: text (a line per row), md or json
};

// Applies --margin, --alpha and --on-inconclusive. Throws InputError naming a bad option.
void apply_overrides(scenario::GateConfig& config, const GateCliOptions& o);

// Prints the verdict on stdout (o.format: a line per row, the Markdown or the JSON), writes
// gate.md, gate.junit.xml and gate.json (into `dir` unless given elsewhere), appends the Markdown
// to $GITHUB_STEP_SUMMARY when set; returns the exit code.
int publish(const gate::GateReport& report, const std::filesystem::path& dir,
            const GateCliOptions& o);

// kvbench gate --history DB --run RUN (or --baseline B --candidate C): the separate-session gate.
int gate_against_history(const GateCliOptions& o);

}  // namespace kvbench::cli
