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
  std::string nonce;    // the unique first line; empty when disabled
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
  // Open loop: from its scheduled arrival to its send (a turn's wait is Turn::wait_ms).
  std::optional<double> queue_ms;
  // A conversation turn (scenario "conversation"); absent on a single prompt.
  struct Turn {
    int conversation = 0;     // numbered over its block's sets
    int set = 0;              // the block's set
    int conversations = 1;    // how many conversations took turns in the set
    int turn = 1;             // 1-based
    bool reuse = true;        // false: reuse defeated
    std::optional<int> slot;  // the server slot it was pinned to
    // The reuse predicted had the server kept this conversation's history: the prompt's tokens
    // up to the end of the previous turn's answer (less the token always read again); 0 on a
    // first turn or with reuse off. Absent where the server gives no token ids.
    std::optional<int> history_tokens;
    // How the history was known: "ids" (the tokens the previous turn generated), "count" (the
    // previous answer's token count, the answer read back as it was generated), or "reported"
    // (no token ids: the previous prompt as the server counted it, a least the turn reuses).
    std::string history_basis;
    // The least reuse that still counts as the history kept: history_tokens, or on the "count"
    // basis the previous prompt (the answer's tokens, read back, may differ from those generated).
    std::optional<int> history_floor;
    std::string answer;  // the generated text, which the next turn sends back
    // Conversations at once: from when the turn was due (its previous answer and think time) to
    // its send, preparing and the wait for its slot included.
    std::optional<double> wait_ms;
  };
  std::optional<Turn> turn;
  // A trace replay's request (scenario workload "trace"); absent on other calls. Its reuse is
  // known three ways: what an infinite cache would reuse, what the server's policy predicts (also
  // the record's expected_cache_n) and what the server reported (server.cache_n).
  struct Replay {
    int index = 0;                  // among the requests replayed, in trace order
    double due_ms = 0;              // its (scaled) arrival, ms after the first request's
    std::optional<double> sent_ms;  // its send, ms after the first request's send
    int input_tokens = 0;
    int output_tokens = 0;
    int blocks = 0;        // its prompt's block ids
    int block_tokens = 0;  // tokens a block holds
    // The longest prefix of its blocks sent earlier in this replay (in the block), in tokens
    // and in blocks: predicted_infinite_tokens.
    int infinite_tokens = 0;
    int infinite_blocks = 0;
    std::optional<int> predicted_tokens;  // the server's policy; absent: no model of it
    std::optional<int> predicted_slot;    // the slot the policy expects the server to pick
    // The distinct blocks this replay sent since the server started, this request's included.
    std::optional<long long> working_set_blocks;
    // Tokens the server read before the prompt's first block (BOS and the chat template's start,
    // the same for every request). predicted_tokens counts as the server does (cache_n); the
    // report's reuse counts the prompt's own tokens, these left out.
    int lead_tokens = 0;
    // Sent as text (kinds that take no token ids): the text re-tokenized to the planned blocks,
    // or not (materialized false); absent for token-id prompts.
    std::optional<bool> materialized;
    std::string predicted_from;  // "slot", "host_cache", "blocks" or "" (nothing reused)
    std::string loss;            // policy below infinite: "capacity" or "placement"; "" none
    std::string mismatch;        // reported against policy: "materialization", "evicted",
                                 // "over_report" or "unexplained"; "" none
  };
  std::optional<Replay> replay;
  // A call whose reuse is its workload's design (a turn, a replayed request): it stays out of
  // the cold-prompt models and is reported by its workload.
  bool reuses_by_design() const { return turn.has_value() || replay.has_value(); }
  bool ok() const { return outcome == Outcome::ok; }
};

nlohmann::json to_json(const CallRecord& r);
CallRecord record_from_json(const nlohmann::json& j);

}  // namespace kvbench
