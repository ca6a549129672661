#pragma once
// The per-call record: one JSON line in calls.jsonl. Records are the contract between a run and
// every later analysis: add fields, never change the meaning of one (bump kRecordVersion).

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/clock.h"
#include "harness/core/describe.h"
#include "harness/core/record_part.h"

namespace kvbench {

// 1: the first layout; 2: a conversation turn's wait from when it was due to its send is the
// turn's wait_ms (version 1 wrote it as queue_ms, which now means the open loop's queue alone).
inline constexpr int kRecordVersion = 2;

// What a call is in its block: discarded warm-up, timed call, or drift probe.
enum class CallKind { warmup, timed, probe };
// A call's part in a prefix-reuse pair: the cold read of a fresh prompt, or its edited resend.
enum class PairRole { none, cold, edited };
// How a call ended. The first six are the transport's (http::Outcome); server_error: the stream
// carried an error; tokenize_error: the prompt could not be counted, nothing was sent;
// server_start_error: the block's server did not start; server_died: the block's server died
// and did not come back, so the call was not sent.
enum class Outcome {
  ok,
  connect_error,
  timeout,
  http_error,
  stream_error,
  aborted,
  server_error,
  tokenize_error,
  server_start_error,
  server_died,
};

// The names records use ("timed", "cold", "connect_error"; PairRole::none is ""). The inverses
// throw InputError naming the value and the accepted names.
std::string_view to_string(CallKind kind);
std::string_view to_string(PairRole role);
std::string_view to_string(Outcome outcome);
CallKind call_kind_from(std::string_view name);
PairRole pair_role_from(std::string_view name);
Outcome outcome_from(std::string_view name);
// By name, for test messages.
std::ostream& operator<<(std::ostream& out, CallKind kind);
std::ostream& operator<<(std::ostream& out, PairRole role);
std::ostream& operator<<(std::ostream& out, Outcome outcome);
// By name in JSON too: never as numbers.
void to_json(nlohmann::json& j, CallKind kind);
void to_json(nlohmann::json& j, PairRole role);
void to_json(nlohmann::json& j, Outcome outcome);
void from_json(const nlohmann::json& j, CallKind& kind);
void from_json(const nlohmann::json& j, PairRole& role);
void from_json(const nlohmann::json& j, Outcome& outcome);

// Raw client-side observations of one streamed call, all on the one steady clock.
struct CallTrace {
  Nanos sent{0};         // request handed to the network
  Nanos request_out{0};  // connection ready, request about to be written (0: never got there)
  Nanos first_byte{0};   // first body byte arrived (0: none)
  Nanos done{0};         // transfer finished
  // Arrival time of every streamed event that carried generated tokens, and how many it carried.
  std::vector<Nanos> token_arrivals;
  std::vector<int> token_counts;
  // Kinds whose stream has events without tokens (OpenAI's role chunk): the first event of any
  // kind (0: not recorded). Reasoning deltas: the first one's arrival and how many there were.
  Nanos first_event{0};
  Nanos first_reasoning{0};
  int reasoning_tokens = 0;
};

// Derived client timings (pure function of a trace; see derive_timing).
struct ClientTiming {
  std::optional<double> ttft_ms;        // sent -> first token
  std::optional<double> first_byte_ms;  // sent -> first byte
  // sent -> request written: the connect (none on a reused connection) and the client's own
  // share of the TTFT
  std::optional<double> request_out_ms;
  std::optional<double> e2e_ms;              // sent -> done
  std::optional<double> decode_tps;          // (tokens after the first) / (last - first token time)
  int tokens = 0;                            // generated tokens seen in the stream
  std::vector<double> token_ms;              // each token event's arrival, ms after sent
  std::optional<double> first_event_ms;      // sent -> first stream event of any kind
  std::optional<double> first_reasoning_ms;  // sent -> first reasoning token (not in ttft_ms)
  int reasoning_tokens = 0;
};

// TTFT, decode rate and the rest from raw timestamps. A trace with no token has no TTFT; fewer
// than two token events (or zero elapsed time between them) has no decode rate.
ClientTiming derive_timing(const CallTrace& trace);

// The server's own figures, normalised to milliseconds and counts; `raw` keeps the object exactly
// as the server reported it.
struct ServerTiming {
  std::optional<int> prompt_n;  // prompt tokens processed in this call
  std::optional<int> cache_n;   // prompt tokens reused from the cache
  // The whole prompt as the server counted it (processed and reused together); absent where the
  // server reports neither in a way that adds up.
  std::optional<int> prompt_total;
  std::optional<double> prompt_ms;  // prompt processing time
  std::optional<int> predicted_n;   // tokens generated
  std::optional<double> predicted_ms;
  std::optional<double> decode_tps;  // predicted_n / predicted_ms, per second
  nlohmann::json raw = nlohmann::json::object();
};

struct CallRecord {
  int version = kRecordVersion;
  std::string run_id;
  int seq = 0;
  int block = 0;
  int round = 0;
  CallKind kind = CallKind::timed;
  int prompt_tokens = 0;  // the factor level (target); a conversation turn: its planned length
  int num_ctx = 0;
  std::string cache_type;
  std::string variant;  // the server variant of an A/B run (scenario "variants"); empty otherwise
  // The server's batch and micro-batch sizes where the scenario sets them (server.batch_size,
  // factors.batch_size; ubatch_size alike); absent: the server's own.
  std::optional<int> batch_size;
  std::optional<int> ubatch_size;
  std::string nonce;                         // the unique first line; empty when disabled
  std::optional<int> prompt_tokens_counted;  // counted with the server's tokenizer before sending
  double t_start_s = 0;                      // seconds since the run's first call started
  // The mean CPU clock (cpufreq's scaling_cur_freq) read just before the call was sent, in MHz;
  // absent where the machine does not report it (most virtual machines).
  std::optional<double> cpu_mhz;
  std::string wall_start;  // UTC
  Outcome outcome = Outcome::ok;
  std::optional<long> http_status;
  std::string error;
  ClientTiming client;
  ServerTiming server;
  std::optional<int> expected_cache_n;  // what reuse should be: 0 for a fresh timed prompt
  std::vector<std::string> flags;       // e.g. "unexpected_cache_reuse"
  // Prefix-reuse pairs (factors.edit_position); absent or empty on single calls.
  std::optional<int> pair_id;  // seq of the pair's cold read
  PairRole pair_role = PairRole::none;
  std::string edit_position;           // the factor level: "0.25", "none", "question", ...
  std::optional<int> edit_first_diff;  // edited read: token index of the first difference
  // Edited read on a server without token ids (Ollama): the first difference's byte offset over
  // the prompt's bytes; edit_first_diff is then estimated from the length calibration.
  std::optional<double> edit_text_fraction;
  std::string edit;  // edited read: what was replaced by what
  // Concurrency (scenario "concurrency", or conversations at once); absent on a block of one call
  // at a time.
  std::optional<int> slots;      // the block's level: the server's slots (-np)
  std::optional<int> stream;     // which stream (and server slot) carried the call; a turn's:
                                 // its conversation's place in the set
  std::optional<int> in_flight;  // calls in flight when it was sent, itself included
  // Open loop: from its scheduled arrival to its send (a turn's wait is its part's).
  std::optional<double> queue_ms;
  // The call's part in its workload (a conversation's turn, a replayed request), written under
  // the workload's key; empty on the calls of a prompt sweep. Its type is the workload's
  // (harness/workloads/<name>/record.h).
  RecordPart part;
  // A call that is its workload's (a turn, a replayed request): its reuse is the workload's
  // design, so it stays out of the cold-prompt models and is reported by its workload.
  bool by_workload() const { return !part.empty(); }
  bool ok() const { return outcome == Outcome::ok; }
};

nlohmann::json to_json(const CallRecord& r);
// A record as calls.jsonl holds it: its one key that names no field of the record, holding an
// object, is its workload part. Throws nlohmann::json's errors (a value of another type, no seq)
// and InputError (a kind, role or outcome that has no name).
CallRecord record_from_json(const nlohmann::json& j);

// The description of a record (core/describe.h): its JSON, its columns in the calls CSV and the
// history's calls table, and its JSON Schema; the workload part aside.
const std::vector<describe::Field<CallRecord>>& record_fields();
// The names of kinds, roles and outcomes, for the schema.
nlohmann::json call_kind_names();
nlohmann::json pair_role_names();
nlohmann::json outcome_names();

}  // namespace kvbench
