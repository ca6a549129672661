#include "harness/core/error.h"
#include "harness/run/runner.h"

namespace kvbench::run {

RunSummary extend_run(const std::filesystem::path& run_dir, int, const RunOptions&) {
  throw Error(run_dir.string() + ": extending a run with more variant blocks is not built yet");
}

}  // namespace kvbench::run
