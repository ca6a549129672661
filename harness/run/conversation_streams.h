#pragma once
// One set of conversations in flight at once (scenario conversation.concurrent): each
// conversation is its own stream, sending its next turn as soon as its previous answer came and
// its think time passed and, where the server pins slots, once no other conversation is using
// its slot (a turn waits for its slot in kvbench, not in the server's queue, so the slot's
// holding, and the turn's reuse, is known when it is sent).
//
// Two threads. The caller's thread only sends and reads through the ConcurrentTransport, so a
// turn being prepared never delays the stamping of another stream's chunks. A worker thread does
// everything else: it renders and counts each turn (calls to the server), joins each answer to
// its conversation, finishes and writes each record, and hands the next turn to the sender.

#include <functional>
#include <vector>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/core/record.h"
#include "harness/http/transport.h"
#include "harness/plan/plan.h"
#include "harness/run/call_records.h"

namespace kvbench::run {

// What a set borrows from the run. Every member but elapsed_s and sleep runs on the worker
// thread, which alone uses the backend's own transport while the set runs.
struct ConversationSetHooks {
  std::function<PreparedCall(const plan::PlannedCall&)> prepare;  // renders a turn
  // Seconds from `now` before the turn may be sent (its think time after the previous answer).
  std::function<double(const plan::PlannedCall&, Nanos now)> wait_s;
  // Once its slot is free: the reuse the slot predicts for the turn.
  std::function<void(PreparedCall&)> expect;
  std::function<void(PreparedCall&, backend::CallResult)> finish;  // answer, record, flags
  std::function<void(const CallRecord&)> write;                    // appends the record
  std::function<double(Nanos)> elapsed_s;  // run time of a clock reading (sending thread)
  // Waits this many seconds on the sending thread while nothing is in flight (a fake clock's
  // tests); empty: a real wait, ended early when a turn is handed over.
  std::function<void(double)> sleep;
};

// Runs `turns` (one set's turns not yet recorded, in plan order) with every conversation in
// flight at once over `slots` server slots; `pin`: conversation k is held to slot k mod `slots`
// and waits while another conversation uses it, otherwise nothing waits for a slot. Each record
// gets its stream (the conversation's place in its set), the calls in flight at its send, and
// queue_ms: from when its turn was due (the previous answer and the think time; the set's start
// for a first turn) to its send, its own preparing and any wait for its slot included. When the
// run is interrupted, no turn starts and the turns in flight end aborted. Rethrows what the worker
// could not do (a record that could not be written).
void run_conversation_set(const std::vector<plan::PlannedCall>& turns, int slots, bool pin,
                          backend::Backend& be, http::ConcurrentTransport& transport,
                          const Clock& clock, const ConversationSetHooks& hooks);

}  // namespace kvbench::run
