#pragma once
// CLI11 wiring: each subcommand registers its options and a callback. A callback throws
// kvbench::Error (exit 1) or InputError (exit 2) on failure and sets `exit_code` otherwise.

#include <CLI/CLI.hpp>

namespace kvbench::cli {

void setup_run_command(CLI::App& app, int& exit_code);
void setup_plan_command(CLI::App& app, int& exit_code);
void setup_report_command(CLI::App& app, int& exit_code);
void setup_gate_command(CLI::App& app, int& exit_code);
void setup_history_command(CLI::App& app, int& exit_code);
void setup_reproduce_command(CLI::App& app, int& exit_code);
void setup_capacity_command(CLI::App& app, int& exit_code);
void setup_compare_command(CLI::App& app, int& exit_code);
void setup_repeat_command(CLI::App& app, int& exit_code);

}  // namespace kvbench::cli
