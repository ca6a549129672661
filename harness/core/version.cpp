#include "harness/core/version.h"

#include "kvbench_git_revision.h"  // written at build time

namespace kvbench {
const char* const kVersion = KVBENCH_VERSION_STRING;
const char* const kGitRevision = KVBENCH_GIT_REVISION;
}  // namespace kvbench
