#pragma once
// A block of concurrent calls on one server (llama-server or Ollama): every call prepared (prompt
// built and counted) before the clock matters, then sent through libcurl's multi interface on
// this one thread; on llama-server each stream is pinned to its own slot. Records are written on
// a second thread, one by one as calls end, so a slow disk never delays the stamping of another
// stream's chunks.

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/backend.h"
#include "harness/backend/llama_server.h"
#include "harness/backend/ollama.h"
#include "harness/core/clock.h"
#include "harness/core/record.h"
#include "harness/http/transport.h"
#include "harness/plan/plan.h"
#include "harness/scenario/concurrency.h"

namespace kvbench::run {

// A call made ready to send: its record so far, its request and its prompt's token ids.
struct PreparedCall {
  plan::PlannedCall call;
  CallRecord record;
  backend::CompletionSpec spec;
  std::vector<int> ids;
  int first_line_tokens = 0;
  bool exact = true;       // the prompt hit its token count
  bool same_count = true;  // an edited prompt kept its token count
  bool ready = false;      // false: `record` holds why preparing failed
};

// One call's body as it arrives, and how the call ended.
struct CallStream {
  std::function<bool(std::string_view chunk, Nanos arrival)> feed;  // false: stop the call
  std::function<backend::CallResult(const http::Result&)> finish;
};

// How one server kind's calls are sent and read.
struct ConcurrentServer {
  std::function<http::Request(const backend::CompletionSpec&)> request;
  std::function<CallStream(const backend::CompletionSpec&)> open;  // a fresh decoder per call
  // llama-server: stream k is pinned to slot k (id_slot), so each call's reuse is predicted
  // from what its slot read last. Ollama picks its own slot: no pinning, no prediction.
  bool pin_slots = true;
  // Ollama: each call's end-to-end time and the server's own durations say how long it waited
  // inside the server (load::server_queue), added to the block as "server_queue".
  bool queue_from_durations = false;
};

// llama-server's /completion (SSE), pinned to slots.
ConcurrentServer llama_server_calls(backend::LlamaServerBackend& be);

// Ollama's streamed /api/generate (NDJSON), unpinned; every ok call refines the length
// calibration as a call one at a time does.
ConcurrentServer ollama_calls(backend::OllamaBackend& be);

// What the block borrows from the run.
struct ConcurrentHooks {
  std::function<PreparedCall(const plan::PlannedCall&)> prepare;   // may call the server
  std::function<double(Nanos)> elapsed_s;                          // run time of a clock reading
  std::function<void(PreparedCall&, backend::CallResult)> finish;  // fills the record
  std::function<void(const CallRecord&)> write;  // appends; called on the writer thread only
  std::function<bool(int seq)> skip;             // already recorded (a resumed run)
  std::vector<int> slot0_ids;                    // what slot 0 holds before the block
};

// Runs the block's calls: closed loop with block.config.slots streams, or open loop with
// Poisson arrivals (seeded by `seed` and the block index) capped at the slots. Each record gets
// its stream, the calls in flight at its send, and in the open loop its queue time; with pinned
// slots the server slot of stream k is k, so expected_cache_n is predicted per slot. Adds to
// `info`: "slots", "deferred" (open loop: arrivals that found every stream busy),
// "concurrency" (load::block_stats of the block's records) and, with queue_from_durations,
// "server_queue" (load::server_queue: where the calls waited inside the server).
void run_concurrent_block(const plan::Block& block, const scenario::Concurrency& concurrency,
                          std::uint64_t seed, const ConcurrentServer& server, const Clock& clock,
                          const ConcurrentHooks& hooks, nlohmann::json& info);

}  // namespace kvbench::run
