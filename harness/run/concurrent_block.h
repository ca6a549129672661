#pragma once
// A block of concurrent calls on one server, of any kind: every call prepared (prompt built and
// counted) before the clock matters, then sent through a ConcurrentTransport (libcurl's multi
// interface) on this one thread; where the backend pins slots, each stream has its own. Records are
// written on a second thread, one by one as calls end, so a slow disk never delays the stamping of
// another stream's chunks.

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/core/record.h"
#include "harness/http/transport.h"
#include "harness/plan/plan.h"
#include "harness/results/manifest.h"
#include "harness/run/call_records.h"
#include "harness/scenario/concurrency.h"

namespace kvbench::run {

// What the block borrows from the run.
struct ConcurrentHooks {
  std::function<PreparedCall(const plan::PlannedCall&)> prepare;   // may call the server
  std::function<double(Nanos)> elapsed_s;                          // run time of a clock reading
  std::function<void(PreparedCall&, backend::CallResult)> finish;  // fills the record
  std::function<void(const CallRecord&)> write;  // appends; called on the writer thread only
  std::function<bool(int seq)> skip;             // already recorded (a resumed run)
  std::vector<int> slot0_ids;                    // what slot 0 holds before the block
};

// Runs the block's calls on `be` through `transport`: closed loop with block.config.slots
// streams, or open loop with Poisson arrivals (seeded by `seed` and the block index) capped at
// the slots. Each record gets its stream, the calls in flight at its send, and in the open loop
// its queue time; where the backend pins slots, the server slot of stream k is k, so
// expected_cache_n is predicted per slot. Adds to `info`: "slots", "deferred" (open loop:
// arrivals that found every stream busy), "concurrency" (load::block_stats of the block's
// records) and, where the server's durations include its queue, "server_queue"
// (load::server_queue: where the calls waited inside the server).
void run_concurrent_block(const plan::Block& block, const scenario::Concurrency& concurrency,
                          std::uint64_t seed, backend::Backend& be,
                          http::ConcurrentTransport& transport, const Clock& clock,
                          const ConcurrentHooks& hooks, results::BlockInfo& info);

}  // namespace kvbench::run
