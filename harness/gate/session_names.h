#pragma once
// The session model the gate reads (harness/session: a run's facts, host and gated values, below
// both the gate and the history), under the gate's names.

#include "harness/session/host.h"
#include "harness/session/run_inputs.h"
#include "harness/session/session.h"
#include "harness/session/session_info.h"
#include "harness/session/where.h"

namespace kvbench::gate {

using session::calls_digest;
using session::condition_label;
using session::host_class;
using session::host_fingerprint;
using session::HostFingerprint;
using session::load_run_inputs;
using session::matches;
using session::RunInputs;
using session::session_values;
using session::SessionInfo;
using session::SessionValue;

}  // namespace kvbench::gate
