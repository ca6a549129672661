#pragma once
// Where the calls of a concurrent block waited inside the server. A server that picks its own
// slots (Ollama) takes as many calls at once as it has slots (OLLAMA_NUM_PARALLEL) and queues the
// rest before reading them; the server's own durations show it. Pure: records in, statistics out.

#include <vector>

#include "harness/core/record.h"
#include "harness/results/block_facts.h"

namespace kvbench::load {

// A call's service: the server's prompt_ms + predicted_ms (a missing one counts 0). Its wait:
// client e2e_ms - service, at least 0: the time the server spent on anything but this call's
// prompt and decode (its queue, a load, the HTTP round trip). Over the block's ok calls:
//   calls: ok timed calls with an e2e time; service_ms_p50: their median service;
//   waited: timed calls whose wait is at least half that median (they waited for a slot);
//   wait_ms: percentiles of every timed call's wait, waited_ms: of the calls that waited;
//   load_duration_reported and load_duration_ms: the calls whose server reported a
//   load_duration (Ollama counts time in its scheduler's queue as loading) and its percentiles;
//   max_in_flight: the most calls kvbench had in flight at a send;
//   served_at_once: the most calls whose service spans [end - service, end] overlap by more
//   than a tenth of the median service (warm-up calls included: they hold a slot too). A
//   server with N slots serves at most N at once.
// Percentiles are type 7, empty without data. Without ok calls or server times: just calls.
results::ServerQueue server_queue(const std::vector<CallRecord>& records);

// The most spans [begin, end) that overlap by more than `tolerance` at any one time. Pure.
int most_overlapping(const std::vector<std::pair<double, double>>& spans, double tolerance);

}  // namespace kvbench::load
