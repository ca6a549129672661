#pragma once
// The driver of many streams on a schedule: calls in flight at once through a
// ConcurrentTransport (libcurl's multi interface), for any CallSource.
//
// - Calls of no lane share `slots` streams: every one is made ready before the clock matters,
//   then each is sent as soon as a stream is free (closed loop) or at its arrival time (of a
//   Poisson process, or the workload's own schedule), once a stream is free (open loop: an arrival
//   that found every stream busy is counted as deferred).
// - The calls of a lane (a conversation) run on the lane's own stream, one after another: the
//   next is made ready once the one before it ended, and sent after the wait its source asks for.
//   Where streams are pinned, lane k reads server slot k mod `slots` and waits in kvbench while
//   another lane uses it, so what the slot holds, and the call's reuse, is known when it is sent.
//
// Two threads. The caller's thread sends and reads, so making a call ready never delays the
// stamping of another stream's chunks; it sends the next call of no lane the moment a stream is
// free, predicting its reuse then. A worker thread does everything else, in order: it makes calls
// ready, predicts a lane's call's reuse, finishes and writes each record, and hands each lane's
// next call to the sender. The source is called by one thread at a time.

#include <cstdint>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/http/transport.h"
#include "harness/run/call_source.h"

namespace kvbench::run {

struct StreamSchedule {
  int slots = 1;           // streams for the calls of no lane; the server's slots
  bool pin = false;        // stream k's calls read server slot k (a lane's: lane mod slots)
  double rate_per_s = 0;   // > 0: calls of no lane arrive as a Poisson process at this rate
  std::uint64_t seed = 0;  // of the arrivals
  // Where given, the calls of no lane arrive at these times instead (seconds after they are
  // handed over, one per call, in order): a workload's own schedule.
  std::vector<double> arrivals_s{};
};

struct StreamsRun {
  std::vector<CallRecord> records;  // in the order the calls ended
  int deferred = 0;                 // open loop: arrivals that found every stream busy
};

// Runs `calls` (in plan order; those already recorded left out) on `be`. Each record gets its
// stream, the calls in flight at its send, and its queue time where it had a time it was due
// (open loop, or a lane's call: from when it was due to its send, its own making ready and any
// wait for its slot included). When the run is interrupted, no call starts and the calls in flight
// end aborted; a call never sent is not recorded. Rethrows what the worker could not do (a record
// that could not be written) once nothing is in flight.
StreamsRun run_streams(const std::vector<plan::PlannedCall>& calls, const StreamSchedule& schedule,
                       CallSource& source, RecordSink& sink, backend::Backend& be,
                       http::ConcurrentTransport& transport, RunTime& time);

}  // namespace kvbench::run
