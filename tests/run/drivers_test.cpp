// Both drivers with a CallSource that exists only here: a workload of numbered prompts whose calls
// may be grouped in lanes. The drivers must make every call ready, predict it from the slot it is
// sent on, send it, finish it and hand its record to the sink, whatever the source is.

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/run/call_source.h"
#include "harness/run/one_at_a_time.h"
#include "harness/run/streams.h"
#include "tests/support/fake_server.h"
#include "tests/support/scripted_transport.h"

namespace kvbench::run {
namespace {

using test_support::FakeBackend;
using test_support::FakeScript;
using test_support::ScriptedConcurrentTransport;

// Prompts "p<seq> w w w ..." of the planned length; with `lanes` > 0, call k is in lane k mod
// lanes. It logs what the drivers asked of it, in order.
class NumberedSource final : public CallSource {
 public:
  explicit NumberedSource(int lanes = 0, double wait_s = 0) : lanes_(lanes), wait_s_(wait_s) {}

  // Watches each call's tokens and ends its stream once it has `tokens` (0: lets it run).
  int end_after = 0;
  // Holds each call for the first `hold_asks` times the driver asks its wait, 0.2 s each (as a
  // source waiting for an event it watches), then lets it go.
  int hold_asks = 0;
  mutable std::map<int, int> asked;  // seq -> how often its wait was asked
  std::map<int, int> told;           // seq -> tokens its watch was told of
  std::set<int> ended;               // seqs whose result came back ended by the watch

  void reset(const plan::Block& /*block*/, backend::Backend& be,
             const std::vector<int>& /*slot0*/) override {
    be_ = &be;
  }
  CallRecord unsent(const plan::PlannedCall& call, const plan::Block& block) const override {
    CallRecord r;
    r.seq = call.seq;
    r.block = block.index;
    return r;
  }
  PreparedCall prepare(const plan::PlannedCall& call) override {
    log("prepare", call.seq);
    PreparedCall p;
    p.call = call;
    p.record.seq = call.seq;
    p.record.prompt_tokens = call.prompt_tokens;
    std::string text = fmt::format("p{}", call.seq);
    for (int i = 1; i < call.prompt_tokens; ++i) {
      text += " w";
    }
    p.ids = be_->tokenize(text);
    p.spec.prompt = std::move(text);
    p.spec.max_tokens = 3;
    if (end_after > 0) {
      p.spec.watch = [this, seq = call.seq](Nanos /*arrival*/, int tokens) {
        const std::lock_guard<std::mutex> lock(mutex_);
        return (told[seq] += tokens) < end_after;
      };
    }
    p.ready = call.prompt_tokens > 0;  // a prompt of no tokens cannot be made
    if (!p.ready) {
      p.record.outcome = Outcome::tokenize_error;
    }
    return p;
  }
  std::optional<int> lane(const plan::PlannedCall& call) const override {
    return lanes_ > 0 ? std::optional<int>(call.seq % lanes_) : std::nullopt;
  }
  // `wait_s` from the first time it is asked about a call.
  double wait_s(const plan::PlannedCall& call, Nanos now) const override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (asked[call.seq]++ < hold_asks) {
      return 0.2;
    }
    const auto due = due_.try_emplace(
        call.seq, now + std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(wait_s_)));
    return std::max(0.0, std::chrono::duration<double>(due.first->second - now).count());
  }
  void expect(PreparedCall& p, std::optional<int> slot) override {
    log("expect", p.call.seq);
    const std::lock_guard<std::mutex> lock(mutex_);
    slot_of[p.call.seq] = slot;
    p.record.expected_cache_n = 0;
  }
  void finish(PreparedCall& p, backend::CallResult res) override {
    log("finish", p.call.seq);
    p.record.client = derive_timing(res.trace);
    p.record.outcome = res.outcome;
    if (res.ended) {
      const std::lock_guard<std::mutex> lock(mutex_);
      ended.insert(p.call.seq);
    }
  }

  std::vector<std::string> events;
  std::map<int, std::optional<int>> slot_of;  // seq -> the slot it was predicted from

 private:
  void log(const char* what, int seq) {
    const std::lock_guard<std::mutex> lock(mutex_);
    events.push_back(fmt::format("{} {}", what, seq));
  }
  int lanes_;
  double wait_s_;
  backend::Backend* be_ = nullptr;
  mutable std::map<int, Nanos> due_;
  mutable std::mutex mutex_;
};

class VectorSink final : public RecordSink {
 public:
  void write(const CallRecord& r) override { records.push_back(r); }
  std::vector<CallRecord> records;
};

// The surroundings of a driver: a fake server on a fake clock.
struct Stage {
  Stage() { source_block.calls = calls(0); }

  static std::vector<plan::PlannedCall> calls(int n, int tokens = 4) {
    std::vector<plan::PlannedCall> out;
    for (int i = 0; i < n; ++i) {
      plan::PlannedCall c;
      c.seq = i;
      c.prompt_tokens = tokens;
      out.push_back(c);
    }
    return out;
  }

  FakeClock clock{std::chrono::seconds(1'000)};
  FakeScript script;
  bool dead = false;
  FakeBackend be{script, clock, dead};
  std::optional<double> first_call;
  RunTime time{clock, clock, first_call, [this](double s) {
                 clock.advance(std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(s)));
               }};
  std::vector<http::Request> requests;
  ScriptedConcurrentTransport transport{clock, requests};
  plan::Block source_block;
  VectorSink sink;
};

int index_of(const std::vector<std::string>& events, const std::string& e) {
  const auto it = std::find(events.begin(), events.end(), e);
  return it == events.end() ? -1 : static_cast<int>(it - events.begin());
}

TEST(OneAtATime, MakesReadyPredictsSendsAndFinishesEachCallInTurn) {
  Stage st;
  NumberedSource source;
  source.reset(st.source_block, st.be, {});
  OneAtATime one(source, st.time);
  for (const auto& call : Stage::calls(3)) {
    st.sink.write(one.send(call, st.be));
  }
  ASSERT_EQ(st.sink.records.size(), 3u);
  EXPECT_EQ(source.events,
            (std::vector<std::string>{"prepare 0", "expect 0", "finish 0", "prepare 1", "expect 1",
                                      "finish 1", "prepare 2", "expect 2", "finish 2"}));
  EXPECT_EQ(st.script.calls, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& r = st.sink.records[i];
    EXPECT_EQ(r.seq, static_cast<int>(i));
    EXPECT_TRUE(r.ok());
    EXPECT_NEAR(r.client.ttft_ms.value_or(-1), 100, 1e-6);    // the fake server's script
    EXPECT_EQ(source.slot_of[r.seq], std::optional<int>(0));  // one slot, the spec's
  }
  EXPECT_DOUBLE_EQ(st.sink.records[0].t_start_s, 0);
  EXPECT_GT(st.sink.records[2].t_start_s, st.sink.records[1].t_start_s);
}

// A source that watches its calls' tokens ends each stream once it has what it needs: the call is
// answered with the tokens up to then, through either driver.
TEST(OneAtATime, ASourceWatchesEachTokenAndEndsTheStream) {
  Stage st;
  NumberedSource source;
  source.end_after = 2;
  source.reset(st.source_block, st.be, {});
  OneAtATime one(source, st.time);
  const CallRecord r = one.send(Stage::calls(1)[0], st.be);
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.client.tokens, 2) << "of the 3 it asked for";
  EXPECT_EQ(source.told[0], 2);
  EXPECT_EQ(source.ended, (std::set<int>{0}));
}

TEST(Streams, ASourceWatchesEachTokenOfItsStreamsAndEndsThem) {
  Stage st;
  NumberedSource source;
  source.end_after = 2;
  source.reset(st.source_block, st.be, {});
  st.transport.chunks = 5;  // each chunk a token
  run_streams(Stage::calls(4), StreamSchedule{2, true}, source, st.sink, st.be, st.transport,
              st.time);
  ASSERT_EQ(st.sink.records.size(), 4u);
  for (const auto& r : st.sink.records) {
    EXPECT_TRUE(r.ok()) << r.seq << ": " << r.error;
    EXPECT_EQ(r.client.tokens, 2) << r.seq;
    EXPECT_EQ(source.told[r.seq], 2) << "not told of a chunk after the end";
  }
  EXPECT_EQ(source.ended, (std::set<int>{0, 1, 2, 3}));
  // Without a watch the same streams run to their end.
  Stage again;
  NumberedSource free_running;
  free_running.reset(again.source_block, again.be, {});
  again.transport.chunks = 5;
  run_streams(Stage::calls(2), StreamSchedule{2, true}, free_running, again.sink, again.be,
              again.transport, again.time);
  for (const auto& r : again.sink.records) {
    EXPECT_EQ(r.client.tokens, 5);
  }
  EXPECT_TRUE(free_running.ended.empty());
}

TEST(OneAtATime, ACallThatCannotBeMadeReadyIsNotSent) {
  Stage st;
  NumberedSource source;
  source.reset(st.source_block, st.be, {});
  OneAtATime one(source, st.time);
  const CallRecord r = one.send(Stage::calls(1, 0)[0], st.be);
  EXPECT_EQ(r.outcome, Outcome::tokenize_error);
  EXPECT_EQ(st.script.calls, 0);
  EXPECT_EQ(index_of(source.events, "expect 0"), -1);
}

TEST(OneAtATime, HoldsACallBackForTheWaitItsSourceAsks) {
  Stage st;
  NumberedSource source(0, 2.5);
  source.reset(st.source_block, st.be, {});
  OneAtATime one(source, st.time);
  const Nanos before = st.clock.now();
  one.send(Stage::calls(1)[0], st.be);
  // Held back 2.5 s (in steps of at most 0.1 s on the fake clock), then sent.
  EXPECT_GE(st.clock.now() - before, std::chrono::milliseconds(2500));
  EXPECT_EQ(st.script.calls, 1);
}

TEST(Streams, CallsOfNoLaneShareTheStreamsAndEachIsPredictedFromItsStreamsSlot) {
  Stage st;
  NumberedSource source;
  source.reset(st.source_block, st.be, {});
  const auto calls = Stage::calls(5);
  const StreamsRun out =
      run_streams(calls, StreamSchedule{2, true}, source, st.sink, st.be, st.transport, st.time);
  ASSERT_EQ(st.sink.records.size(), 5u);
  ASSERT_EQ(out.records.size(), 5u);
  std::set<int> seqs;
  for (const auto& r : st.sink.records) {
    seqs.insert(r.seq);
    ASSERT_TRUE(r.stream.has_value());
    EXPECT_TRUE(*r.stream == 0 || *r.stream == 1) << *r.stream;
    EXPECT_EQ(source.slot_of[r.seq], r.stream);  // pinned: the stream's own slot
    ASSERT_TRUE(r.in_flight.has_value());
    EXPECT_LE(*r.in_flight, 2);
    EXPECT_FALSE(r.queue_ms.has_value());  // closed loop: nothing was due
    EXPECT_TRUE(r.ok());
  }
  EXPECT_EQ(seqs.size(), 5u);
  // Every call of no lane is made ready before the first is sent.
  for (int i = 0; i < 5; ++i) {
    EXPECT_LT(index_of(source.events, fmt::format("prepare {}", i)),
              index_of(source.events, "expect 0"));
  }
  for (const auto& req : st.requests) {  // each sent to its stream's slot
    EXPECT_TRUE(req.url == "fake://slot/0" || req.url == "fake://slot/1") << req.url;
  }
}

TEST(Streams, ALanesNextCallIsMadeReadyOnlyOnceTheOneBeforeItEnded) {
  Stage st;
  NumberedSource source(2);  // lanes: even and odd seqs
  source.reset(st.source_block, st.be, {});
  const auto calls = Stage::calls(6);
  run_streams(calls, StreamSchedule{2, false}, source, st.sink, st.be, st.transport, st.time);
  ASSERT_EQ(st.sink.records.size(), 6u);
  for (int seq = 2; seq < 6; ++seq) {
    EXPECT_LT(index_of(source.events, fmt::format("finish {}", seq - 2)),
              index_of(source.events, fmt::format("prepare {}", seq)))
        << "seq " << seq;
  }
  for (const auto& r : st.sink.records) {
    EXPECT_EQ(r.stream, std::optional<int>(r.seq % 2));  // a lane's own stream
    EXPECT_TRUE(r.queue_ms.has_value());                 // it was due when made ready
    EXPECT_EQ(source.slot_of[r.seq], std::nullopt);      // not pinned: the server picks
  }
}

// A source may hold a lane's call until an event it watches: the driver asks its wait again
// each time it falls due, and sends it once the source says 0.
TEST(Streams, ACallIsHeldForAsLongAsItsSourceSaysToWait) {
  Stage st;
  NumberedSource source(1);  // one lane: each call made ready once the one before ended
  source.hold_asks = 3;
  source.reset(st.source_block, st.be, {});
  run_streams(Stage::calls(2), StreamSchedule{1, false}, source, st.sink, st.be, st.transport,
              st.time);
  ASSERT_EQ(st.sink.records.size(), 2u);
  EXPECT_EQ(source.asked[0], 4) << "asked until it said 0";
  EXPECT_EQ(source.asked[1], 4);
  const auto& first = st.sink.records[0];
  const auto& second = st.sink.records[1];
  ASSERT_TRUE(first.client.e2e_ms);
  EXPECT_GE(second.t_start_s - first.t_start_s, *first.client.e2e_ms / 1000 + 0.6 - 1e-9)
      << "held three times 0.2 s after the call before it ended";
}

TEST(Streams, OpenLoopArrivalsThatFindEveryStreamBusyAreDeferred) {
  Stage st;
  NumberedSource source;
  source.reset(st.source_block, st.be, {});
  // 1 stream, 20 arrivals at 1,000 per second: each call takes 80 ms on the scripted transport,
  // so nearly every arrival finds the stream busy.
  const auto calls = Stage::calls(20);
  const StreamsRun out = run_streams(calls, StreamSchedule{1, false, 1000.0, 7}, source, st.sink,
                                     st.be, st.transport, st.time);
  ASSERT_EQ(st.sink.records.size(), 20u);
  EXPECT_GE(out.deferred, 15);
  EXPECT_LE(out.deferred, 19);  // the first found it free
  for (const auto& r : st.sink.records) {
    ASSERT_TRUE(r.queue_ms.has_value());
    EXPECT_GE(*r.queue_ms, 0);
  }
}

TEST(Streams, ACallThatCannotBeMadeReadyIsRecordedAndTheOthersGoOn) {
  Stage st;
  NumberedSource source;
  source.reset(st.source_block, st.be, {});
  auto calls = Stage::calls(3);
  calls[1].prompt_tokens = 0;
  const StreamsRun out =
      run_streams(calls, StreamSchedule{2, true}, source, st.sink, st.be, st.transport, st.time);
  ASSERT_EQ(st.sink.records.size(), 3u);
  EXPECT_EQ(out.records.size(), 2u);  // the sent ones
  EXPECT_EQ(st.sink.records[0].seq, 1);
  EXPECT_EQ(st.sink.records[0].outcome, Outcome::tokenize_error);
}

}  // namespace
}  // namespace kvbench::run
