#pragma once
// kvbench's whole command line: the top-level description, examples and every subcommand, for the
// binary (harness/main.cpp) and for tests that parse commands with the real parser.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kvbench::cli {

// Adds kvbench's description, footer, version flag and every subcommand to `app`, each callback
// setting `exit_code`.
void setup_app(CLI::App& app, int& exit_code);

// What parsing throws once it has checked a command line, after disarm().
struct CheckedOnly {};

// Makes parsing stop once it has checked a command line (its subcommands, its options' values
// converted and validated, requirements and exclusions met), before any command runs: parse()
// then throws CheckedOnly. (The commands' own callbacks keep their options' storage alive, so
// they stay in place.)
void disarm(CLI::App& app);

// The example command lines of `app`'s help (its footer and its subcommands' footers): the lines
// that start with "kvbench ", their explanation cut off.
std::vector<std::string> help_examples(const CLI::App& app);

}  // namespace kvbench::cli
