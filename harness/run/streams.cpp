#include "harness/run/streams.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "harness/load/arrivals.h"
#include "harness/process/signals.h"
#include "harness/run/stream_lanes.h"

namespace kvbench::run {

namespace {

constexpr auto kMaxWait = std::chrono::milliseconds(50);

Nanos seconds_after(Nanos t, double s) {
  return t + std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(s));
}

class Streams {
 public:
  Streams(const std::vector<plan::PlannedCall>& calls, const StreamSchedule& schedule,
          CallSource& source, RecordSink& sink, backend::Backend& be,
          http::ConcurrentTransport& transport, RunTime& time)
      : calls_(calls),
        schedule_(schedule),
        source_(source),
        sink_(sink),
        be_(be),
        transport_(transport),
        time_(time),
        lanes_(source_, sink, time.clock(), schedule.slots, schedule.pin) {
    for (int stream = schedule.slots - 1; stream >= 0; --stream) {
      free_.push_back(stream);
    }
  }

  StreamsRun run() {
    std::thread worker([this] { work(); });
    try {
      send();
    } catch (...) {
      close();
      worker.join();
      throw;
    }
    close();
    worker.join();
    if (error_) {
      std::rethrow_exception(error_);
    }
    return {std::move(records_), deferred_};
  }

 private:
  // A call that ended (or was never sent: `sent` false), from the sender to the worker.
  struct Ended {
    PreparedCall p;
    backend::CallResult res;
    std::optional<int> lane;
    bool sent = true;
  };

  const Clock& clock() const { return time_.clock(); }
  bool open_loop() const { return schedule_.rate_per_s > 0 || !schedule_.arrivals_s.empty(); }
  std::optional<int> pinned(int slot) const {
    return schedule_.pin ? std::optional<int>(slot) : std::nullopt;
  }

  // --- the sending thread ---

  void send() {
    std::vector<LaneCall> waiting;  // lanes' calls handed over, not yet due
    while (true) {
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        take_handed(waiting);
        if (error_) {  // the worker failed: send nothing more, let what is in flight end
          waiting.clear();
          unlaned_.clear();
          next_unlaned_ = 0;
        }
        if (worker_done_ && waiting.empty() && next_unlaned_ >= unlaned_.size() &&
            transport_.in_flight() == 0) {
          return;
        }
      }
      if (process::stop_requested()) {
        give_back(waiting);
      }
      launch_unlaned();
      const Nanos now = clock().now();
      Nanos next_due = now + kMaxWait;
      for (std::size_t i = 0; i < waiting.size();) {
        if (waiting[i].due <= now) {
          // Its source may hold it longer (until an event it watches): asked again, as the
          // driver of one call at a time asks until it says 0.
          const double more = source_.wait_s(waiting[i].p.call, now);
          if (more > 0) {
            waiting[i].due = seconds_after(now, more);
            next_due = std::min(next_due, waiting[i].due);
            ++i;
            continue;
          }
          launch(std::move(waiting[i].p), waiting[i].due, true, waiting[i].lane, waiting[i].lane);
          waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          next_due = std::min(next_due, waiting[i].due);
          ++i;
        }
      }
      if (open_loop() && next_unlaned_ < unlaned_.size() && !free_.empty()) {
        next_due = std::min(next_due, arrival(next_unlaned_));
      }
      const bool idle = waiting.empty() && next_unlaned_ >= unlaned_.size();
      pause(idle, std::clamp(next_due - clock().now(), Nanos{0}, Nanos{kMaxWait}));
    }
  }

  // Takes what the worker handed over (under mutex_): lanes' calls, and once, every call of no
  // lane, from which the clock of the arrivals starts.
  void take_handed(std::vector<LaneCall>& waiting) {
    for (auto& r : to_send_) {
      waiting.push_back(std::move(r));
    }
    to_send_.clear();
    if (!unlaned_handed_.empty()) {
      unlaned_ = std::move(unlaned_handed_);
      unlaned_handed_.clear();
      start_ = clock().now();
      if (!schedule_.arrivals_s.empty()) {
        arrivals_ = schedule_.arrivals_s;
        arrivals_.resize(unlaned_.size(), arrivals_.empty() ? 0.0 : arrivals_.back());
      } else if (open_loop()) {
        arrivals_ = load::poisson_arrivals_s(schedule_.seed, static_cast<int>(unlaned_.size()),
                                             schedule_.rate_per_s);
      }
    }
  }

  // Interrupted: no call starts; the worker hears of each that it was never sent.
  void give_back(std::vector<LaneCall>& waiting) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto& r : waiting) {
      ended_.push_back({std::move(r.p), {}, r.lane, false});
    }
    for (; next_unlaned_ < unlaned_.size(); ++next_unlaned_) {
      ended_.push_back({std::move(unlaned_[next_unlaned_]), {}, std::nullopt, false});
    }
    waiting.clear();
    to_worker_.notify_one();
  }

  Nanos arrival(std::size_t i) const { return seconds_after(start_, arrivals_[i]); }

  // Sends the calls of no lane that are due while a stream is free; in the open loop an arrival
  // that finds every stream busy is counted once as deferred and sent when one is free.
  void launch_unlaned() {
    while (next_unlaned_ < unlaned_.size() && !process::stop_requested()) {
      if (open_loop() && clock().now() < arrival(next_unlaned_)) {
        return;
      }
      if (free_.empty()) {
        if (open_loop() && !counted_deferred_) {
          ++deferred_;
          counted_deferred_ = true;
        }
        return;
      }
      counted_deferred_ = false;
      const int stream = free_.back();
      free_.pop_back();
      PreparedCall& p = unlaned_[next_unlaned_];
      if (schedule_.pin) {
        p.spec.slot = stream;
      }
      source_.expect(p, pinned(stream));
      const Nanos due = open_loop() ? arrival(next_unlaned_) : Nanos{0};
      launch(std::move(p), due, open_loop(), stream, std::nullopt);
      ++next_unlaned_;
    }
  }

  // Waits for calls in flight, for the next call due, or for the worker to hand one over.
  void pause(bool idle, Nanos wait) {
    if (transport_.in_flight() > 0) {
      // The worker's wake() ends the wait when it hands a call over.
      transport_.poll(std::chrono::ceil<std::chrono::milliseconds>(wait));
    } else if (!idle && time_.scripted_sleep()) {
      time_.sleep(std::chrono::duration<double>(wait).count());
    } else {
      std::unique_lock<std::mutex> lock(mutex_);
      to_sender_.wait_for(lock, idle ? Nanos{kMaxWait} : wait, [this] {
        return !to_send_.empty() || !unlaned_handed_.empty() || worker_done_;
      });
    }
  }

  // Sends `p` on `stream`; `queued`: it was due at `due`, and its record gets its queue time
  // where its source keeps it.
  void launch(PreparedCall p, Nanos due, bool queued, int stream, std::optional<int> lane) {
    auto call = std::make_shared<PreparedCall>(std::move(p));
    CallRecord& r = call->record;
    r.stream = stream;
    r.in_flight = static_cast<int>(transport_.in_flight()) + 1;
    const Nanos now = clock().now();
    if (queued) {
      const double ms = std::chrono::duration<double, std::milli>(now - due).count();
      source_.waited(r, ms);
    }
    r.wall_start = utc_now_rfc3339();
    r.t_start_s = time_.elapsed_s(now);
    auto decoder =
        std::make_shared<backend::WatchedStream>(be_.open_stream(call->spec), call->spec.watch);
    transport_.start(
        be_.stream_request(call->spec),
        [decoder](std::string_view chunk, Nanos arrival) { return decoder->feed(chunk, arrival); },
        [this, call, decoder, stream, lane](http::Result res) {
          backend::CallResult result = decoder->finish(res);
          source_.released(*call, result);
          {
            const std::lock_guard<std::mutex> lock(mutex_);
            ended_.push_back({std::move(*call), std::move(result), lane, true});
            to_worker_.notify_one();
          }
          if (!lane) {
            free_.push_back(stream);  // the next call of no lane goes at once
            launch_unlaned();
          }
        });
  }

  // Asks the worker to end once what has ended is handled.
  void close() {
    const std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    to_worker_.notify_one();
  }

  // --- the worker thread ---

  void work() {
    try {
      start();
      while (outstanding_ > 0) {
        Ended e;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          to_worker_.wait(lock, [this] { return !ended_.empty() || closing_; });
          if (ended_.empty()) {
            break;  // the sender ended early (it threw)
          }
          e = std::move(ended_.front());
          ended_.pop_front();
        }
        ended(std::move(e));
        hand_over();
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      worker_done_ = true;
    }
    to_sender_.notify_one();
    transport_.wake();
  }

  // Makes every call of no lane ready and hands them over, then each lane's first call.
  void start() {
    std::deque<PreparedCall> ready;
    for (const auto& call : calls_) {
      if (const auto lane = source_.lane(call)) {
        lanes_.add(call, *lane);
        continue;
      }
      PreparedCall p = source_.prepare(call);
      if (p.ready) {
        ready.push_back(std::move(p));
      } else {
        sink_.write(p.record);
      }
    }
    if (!ready.empty()) {
      outstanding_ += static_cast<int>(ready.size());
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        unlaned_handed_ = std::move(ready);
      }
      to_sender_.notify_one();
      transport_.wake();
    }
    lanes_.prepare_first();
    hand_over();
  }

  void ended(Ended e) {
    --outstanding_;
    if (e.sent) {
      source_.finish(e.p, std::move(e.res));
    }
    if (e.lane) {
      lanes_.release(*e.lane);  // once finished: what the slot holds is known
    }
    if (!e.sent) {
      return;
    }
    records_.push_back(e.p.record);
    sink_.write(e.p.record);
    if (e.lane) {
      lanes_.prepare_next(*e.lane);
    }
  }

  // Hands to the sender each lane's next call whose slot is free.
  void hand_over() {
    if (process::stop_requested()) {
      return;
    }
    std::vector<LaneCall> handed = lanes_.take_free();
    if (handed.empty()) {
      return;
    }
    outstanding_ += static_cast<int>(handed.size());
    {
      // All at once: calls that may start together are sent together.
      const std::lock_guard<std::mutex> lock(mutex_);
      for (auto& r : handed) {
        to_send_.push_back(std::move(r));
      }
    }
    to_sender_.notify_one();
    transport_.wake();
  }

  const std::vector<plan::PlannedCall>& calls_;
  const StreamSchedule schedule_;
  LockedSource source_;  // called by one thread at a time
  RecordSink& sink_;
  backend::Backend& be_;
  http::ConcurrentTransport& transport_;
  RunTime& time_;

  // The worker's own.
  Lanes lanes_;
  int outstanding_ = 0;  // handed over and not yet back
  std::vector<CallRecord> records_;

  // The sender's own.
  std::deque<PreparedCall> unlaned_;  // every call of no lane, ready; sent from next_unlaned_ on
  std::size_t next_unlaned_ = 0;
  std::vector<double> arrivals_;  // open loop: seconds after start_
  Nanos start_{0};
  std::vector<int> free_;  // streams of no lane with no call in flight
  int deferred_ = 0;
  bool counted_deferred_ = false;  // the waiting arrival was counted

  // Shared, under mutex_.
  std::mutex mutex_;
  std::condition_variable to_sender_;
  std::condition_variable to_worker_;
  std::deque<LaneCall> to_send_;
  std::deque<PreparedCall> unlaned_handed_;
  std::deque<Ended> ended_;
  bool worker_done_ = false;
  bool closing_ = false;
  std::exception_ptr error_;
};

}  // namespace

StreamsRun run_streams(const std::vector<plan::PlannedCall>& calls, const StreamSchedule& schedule,
                       CallSource& source, RecordSink& sink, backend::Backend& be,
                       http::ConcurrentTransport& transport, RunTime& time) {
  if (calls.empty()) {
    return {};
  }
  Streams streams(calls, schedule, source, sink, be, transport, time);
  return streams.run();
}

}  // namespace kvbench::run
