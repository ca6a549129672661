#pragma once
// A run's host fingerprint, read from its run.json. Pure.

#include <vector>

#include "harness/core/record.h"
#include "harness/results/manifest.h"
#include "harness/session/session_info.h"

namespace kvbench::session {

// The fingerprint of the host `run` recorded. Fields run.json lacks stay empty.
HostFingerprint host_fingerprint(const results::RunManifest& run);

// The digest of a run's calls ("fnv1a64:" and the hash of their records, a line each), which tells
// the same run from one extended or resumed since.
std::string calls_digest(const std::vector<CallRecord>& calls);

}  // namespace kvbench::session
