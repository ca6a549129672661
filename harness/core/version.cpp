#include "harness/core/version.h"

namespace kvbench {
const char* const kVersion = KVBENCH_VERSION_STRING;
const char* const kGitRevision = KVBENCH_GIT_REVISION;
}  // namespace kvbench
