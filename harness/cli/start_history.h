#pragma once
// Where `kvbench repeat` keeps the start-to-start components it measured, and where `kvbench run`
// finds one for effects that rest on too few server starts: a history (SQLite file or
// postgresql:// URL) named by --history or, without it, KVBENCH_HISTORY.

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/report/repeat.h"

namespace kvbench::cli {

// Registers --history on `cmd` with `help`.
void add_start_history_option(CLI::App* cmd, std::string& history, const std::string& help);

// --history, else KVBENCH_HISTORY, else empty.
std::string start_history(const std::string& flag);

// Opens the history for reading before anything runs: InputError naming it where it cannot be.
void check_start_history(const std::string& history);
// The same for writing (a SQLite file is created where missing).
void check_start_history_writable(const std::string& history);

// Gives a finished run the newest components the history holds for its machine class, server
// build and model (run.json's start_tau), before its report is written; an attached server's run
// gets none of them (its start is not one of those the components were measured over). Says on
// stderr what it gave.
void give_start_taus(const std::filesystem::path& run_dir, const std::string& history);

// Stores each effect's run-to-run component (tau) of a repeat whose runs each started their own
// servers on one machine class, server build and model, with the starts per setting it rested
// on. Says on stderr what it stored, or why nothing.
void store_start_taus(const report::RepeatReport& r, const std::vector<report::RepeatRun>& runs,
                      const std::string& history);

}  // namespace kvbench::cli
