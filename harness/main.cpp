// kvbench: measures what long prompts cost a local LLM server.

#include "harness/cli/entry.h"

int main(int argc, char** argv) {
  return kvbench::cli::run_main(argc, argv);
}
