#pragma once
// The lanes of the driver of many streams (streams.h), on its worker thread: each lane's calls in
// order, the next made ready once the one before it ended, and handed over only while no other
// lane uses its server slot. And the source as both of the driver's threads call it: one at a
// time.

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "harness/run/call_source.h"

namespace kvbench::run {

// A CallSource behind a lock, for a driver whose threads both call it.
class LockedSource {
 public:
  explicit LockedSource(CallSource& source) : source_(source) {}

  std::optional<int> lane(const plan::PlannedCall& call);
  PreparedCall prepare(const plan::PlannedCall& call);
  double wait_s(const plan::PlannedCall& call, Nanos now);
  void waited(CallRecord& r, double ms);
  void released(const PreparedCall& p, const backend::CallResult& res);
  void expect(PreparedCall& p, std::optional<int> slot);
  void finish(PreparedCall& p, backend::CallResult res);

 private:
  CallSource& source_;
  std::mutex mutex_;
};

// A lane's call made ready, with when it is due.
struct LaneCall {
  PreparedCall p;
  Nanos due{0};
  int lane = 0;
};

class Lanes {
 public:
  // `slots` server slots; `pin`: lane k reads slot k mod slots (else every lane has its own).
  Lanes(LockedSource& source, RecordSink& sink, const Clock& clock, int slots, bool pin)
      : source_(source), sink_(sink), clock_(clock), slots_(slots), pin_(pin) {}

  // Adds a call to its lane, in plan order.
  void add(const plan::PlannedCall& call, int lane) { lanes_[lane].push_back(call); }
  // Makes each lane's first call ready.
  void prepare_first();
  // Makes the lane's next call ready and queues it for its slot; a call that cannot be made ready
  // is recorded as it failed and the one after it is next.
  void prepare_next(int lane);
  // The next call of each lane whose slot is free, its reuse predicted from that slot, which is
  // busy from now on.
  std::vector<LaneCall> take_free();
  // The lane's call ended (and was finished): its slot is free.
  void release(int lane) { busy_.erase(slot_key(lane)); }

 private:
  int slot_key(int lane) const { return pin_ ? lane % slots_ : lane; }

  LockedSource& source_;
  RecordSink& sink_;
  const Clock& clock_;
  int slots_;
  bool pin_;
  std::map<int, std::deque<plan::PlannedCall>> lanes_;  // not yet made ready
  std::map<int, std::deque<LaneCall>> queued_;          // ready, waiting for their slot
  std::set<int> busy_;                                  // slots (or lanes) with a call handed over
};

}  // namespace kvbench::run
