#pragma once
// kvbench's entry point: parses the command line and runs the command it names. Declared apart
// from app.h so that the binary's main() compiles without the command-line library's header.

namespace kvbench::cli {

// Runs kvbench with main()'s arguments and returns its exit code: 0 done, 2 for a command line
// the parser rejects or input that fails a check, a command's own code otherwise.
int run_main(int argc, char** argv);

}  // namespace kvbench::cli
