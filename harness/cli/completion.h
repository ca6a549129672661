#pragma once
// Generated from the command-line definition itself, so they never fall behind it: a bash
// completion script (`kvbench completion bash`: subcommands, options, files or folders for
// options that take them, the bundled scenario names) and every subcommand's help as a man-page
// section (`kvbench completion man`, for help2man's --include). The subcommand is hidden from
// --help; the build and the install use it.

#include <CLI/CLI.hpp>

namespace kvbench::cli {

// Registers the hidden `completion` subcommand; it walks `app` as it is when it runs.
void setup_completion_command(CLI::App& app);

}  // namespace kvbench::cli
