#pragma once
// kvbench's version and the git revision it was built from (recorded in every run.json).

namespace kvbench {
extern const char* const kVersion;
extern const char* const kGitRevision;
}  // namespace kvbench
