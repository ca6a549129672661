#pragma once
// kvbench history report: the stored sessions that carry given run labels, host by host.

#include <string>

#include <CLI/CLI.hpp>

namespace kvbench::cli {

// Adds `report` to the `history` command.
void add_history_report(CLI::App& history_cmd, const std::string& where_help, int& exit_code);

}  // namespace kvbench::cli
