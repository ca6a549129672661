#pragma once
// The trace part of a run's report (scenario workload "trace"): each replayed request's reuse
// three ways (an infinite cache, the server's policy, what the server reported), the hit rates of
// each under their three definitions with the definition beside the number, the gaps by class
// with their first requests, the schedule's slip, and TTFT against the tokens reused and
// computed. Pure but for reading the trace file again (for the whole trace's hit rates).

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/report/workload_section.h"
#include "harness/scenario/scenario.h"
#include "harness/workloads/trace/record.h"
#include "harness/workloads/trace/spec.h"

namespace kvbench::report {

// Hit rates of one kind of reuse, under the three definitions (0 to 1).
struct TraceRates {
  double tokens = 0;            // reused tokens / input tokens
  double blocks = 0;            // reused blocks / blocks sent
  double per_request_mean = 0;  // mean over requests of reused blocks / its blocks
};

// The blocks of a request that `tokens` reused: whole blocks, all of them when the reuse reached
// the prompt's last token (which the server reads again). Pure.
int reused_blocks(const workloads::ReplayRecord& r, long long tokens);

// The prompt's own tokens the server reported reused: its cache_n less the tokens it read before
// the prompt (the chat template's start, Replay::lead_tokens); nullopt for an unanswered call or
// one without a count.
std::optional<int> reported_reuse(const CallRecord& r);
// The prompt's own tokens the policy predicted reused (predicted_tokens less lead_tokens).
std::optional<int> predicted_reuse(const workloads::ReplayRecord& t);

// A request's reuse of one kind: tokens and whole blocks.
struct TraceReuse {
  long long tokens = 0;
  int blocks = 0;
};
// Which reuse: what an infinite cache would reuse, what the policy predicted, what the server
// reported; nullopt where the record has none.
enum class TraceReuseKind { infinite, predicted, actual };
std::optional<TraceReuse> trace_reuse(const CallRecord& r, TraceReuseKind kind);

// The three rates over `calls` (replayed requests) that have the reuse `kind`; nullopt: none has.
std::optional<TraceRates> trace_rates(const std::vector<const CallRecord*>& calls,
                                      TraceReuseKind kind);

// Each replayed request's reported reuse against its predicted one (the server's cache_n, the
// policy's prediction, lead tokens left out), with the line where they agree; nothing when no
// request has both.
std::optional<Plot> trace_reuse_plot(const std::vector<const CallRecord*>& replayed);

// Prompts sent as text (kinds that take no token ids): how many read as planned and the tokens
// the server read before every prompt, {requests, read_as_planned, lead_tokens}; null where the
// prompts were token ids. write_trace_text says it in a sentence (nothing for null).
nlohmann::json trace_text_json(const std::vector<const CallRecord*>& replayed);
void write_trace_text(std::ostream& md, const nlohmann::json& text);

// The distinct blocks sent by ten evenly spaced requests of the first block, against the cache's
// capacity in blocks (a managed llama-server's slots' KV cells, or an attached block cache's
// pool); null where the records do not carry it. write_working_set says it as a table.
nlohmann::json working_set_json(const scenario::ServerSpec& server, const workloads::TraceReplay& t,
                                const std::vector<const CallRecord*>& replayed);
void write_working_set(std::ostream& md, const nlohmann::json& w);

WorkloadSection trace_section(const workloads::TraceReplay& spec,
                              const scenario::ServerSpec& server,
                              const std::vector<CallRecord>& calls);

}  // namespace kvbench::report
