#include "harness/run/conversation_streams.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "harness/process/signals.h"

namespace kvbench::run {

namespace {

constexpr auto kMaxWait = std::chrono::milliseconds(50);

Nanos seconds_after(Nanos t, double s) {
  return t + std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(s));
}

class ConversationSet {
 public:
  ConversationSet(const std::vector<plan::PlannedCall>& turns, int slots, bool pin,
                  backend::Backend& be, http::ConcurrentTransport& transport, const Clock& clock,
                  const ConversationSetHooks& hooks)
      : slots_(slots), pin_(pin), be_(be), transport_(transport), clock_(clock), hooks_(hooks) {
    for (const auto& t : turns) {
      conversations_[t.turn->index].turns.push_back(t);
    }
  }

  void run() {
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
  }

 private:
  // A turn ready to send, from the worker to the sender.
  struct Ready {
    PreparedCall p;
    Nanos due{0};
  };
  // A turn that ended (or was never sent: `sent` false), from the sender to the worker.
  struct Ended {
    PreparedCall p;
    backend::CallResult res;
    bool sent = true;
  };
  struct Conversation {
    std::deque<plan::PlannedCall> turns;  // not yet prepared
  };

  int key(const PreparedCall& p) const {
    const int index = p.call.turn->index;
    return pin_ ? index % slots_ : index;
  }

  // --- the sending thread ---

  void send() {
    std::vector<Ready> waiting;  // handed over, not yet due
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        for (auto& r : to_send_) {
          waiting.push_back(std::move(r));
        }
        to_send_.clear();
        if (error_) {
          waiting.clear();  // the worker failed: send nothing more, let what is in flight end
        }
        if (worker_done_ && waiting.empty() && transport_.in_flight() == 0) {
          return;
        }
      }
      if (process::stop_requested() && !waiting.empty()) {
        // Interrupted: no turn starts; the worker hears each was never sent.
        const std::lock_guard<std::mutex> lock(mutex_);
        for (auto& r : waiting) {
          ended_.push_back({std::move(r.p), {}, false});
        }
        waiting.clear();
        to_worker_.notify_one();
      }
      const Nanos now = clock_.now();
      Nanos next_due = now + kMaxWait;
      for (std::size_t i = 0; i < waiting.size();) {
        if (waiting[i].due <= now) {
          launch(std::move(waiting[i]));
          waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          next_due = std::min(next_due, waiting[i].due);
          ++i;
        }
      }
      const auto wait =
          std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(next_due - clock_.now()),
                     std::chrono::milliseconds(0), kMaxWait);
      if (transport_.in_flight() > 0) {
        transport_.poll(wait);  // the worker's wake() ends the wait when it hands a turn over
      } else if (!waiting.empty() && hooks_.sleep) {
        hooks_.sleep(std::chrono::duration<double>(wait).count());
      } else {
        std::unique_lock<std::mutex> lock(mutex_);
        to_sender_.wait_for(lock, waiting.empty() ? kMaxWait : wait,
                            [this] { return !to_send_.empty() || worker_done_; });
      }
    }
  }

  void launch(Ready ready) {
    auto call = std::make_shared<PreparedCall>(std::move(ready.p));
    CallRecord& r = call->record;
    r.stream = call->call.turn->index;
    r.in_flight = static_cast<int>(transport_.in_flight()) + 1;
    const Nanos now = clock_.now();
    r.queue_ms = std::chrono::duration<double, std::milli>(now - ready.due).count();
    r.wall_start = utc_now_rfc3339();
    r.t_start_s = hooks_.elapsed_s(now);
    std::shared_ptr<backend::StreamDecoder> stream = be_.open_stream(call->spec);
    transport_.start(
        be_.stream_request(call->spec),
        [stream](std::string_view chunk, Nanos arrival) { return stream->feed(chunk, arrival); },
        [this, call, stream](http::Result res) {
          backend::CallResult result = stream->finish(res);
          const std::lock_guard<std::mutex> lock(mutex_);
          ended_.push_back({std::move(*call), std::move(result), true});
          to_worker_.notify_one();
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
      for (auto& [index, conversation] : conversations_) {
        prepare_next(conversation);
      }
      hand_over();
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
        --outstanding_;
        busy_.erase(key(e.p));
        if (e.sent) {
          hooks_.finish(e.p, std::move(e.res));
          hooks_.write(e.p.record);
          prepare_next(conversations_[e.p.call.turn->index]);
        }
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

  // Prepares the conversation's next turn and queues it for its slot; a turn that cannot be
  // prepared is recorded as it failed (the history stays as it was) and the one after it is next.
  void prepare_next(Conversation& c) {
    while (!c.turns.empty() && !process::stop_requested()) {
      const plan::PlannedCall call = c.turns.front();
      c.turns.pop_front();
      PreparedCall p = hooks_.prepare(call);
      if (!p.ready) {
        hooks_.write(p.record);
        continue;
      }
      const Nanos now = clock_.now();
      const Nanos due = seconds_after(now, hooks_.wait_s(call, now));
      const int k = key(p);
      queued_[k].push_back({std::move(p), due});
      return;
    }
  }

  // Hands every queued turn whose slot is free to the sender, with its slot's prediction.
  void hand_over() {
    if (process::stop_requested()) {
      return;
    }
    std::vector<Ready> handed;
    for (auto& [k, queue] : queued_) {
      if (queue.empty() || busy_.count(k) != 0) {
        continue;
      }
      handed.push_back(std::move(queue.front()));
      queue.pop_front();
      hooks_.expect(handed.back().p);
      busy_.insert(k);
      ++outstanding_;
    }
    if (handed.empty()) {
      return;
    }
    {
      // All at once: turns that may start together are sent together.
      const std::lock_guard<std::mutex> lock(mutex_);
      for (auto& r : handed) {
        to_send_.push_back(std::move(r));
      }
    }
    to_sender_.notify_one();
    transport_.wake();
  }

  const int slots_;
  const bool pin_;
  backend::Backend& be_;
  http::ConcurrentTransport& transport_;
  const Clock& clock_;
  const ConversationSetHooks& hooks_;

  // The worker's own.
  std::map<int, Conversation> conversations_;  // by place in the set
  std::map<int, std::deque<Ready>> queued_;    // prepared, waiting for their slot
  std::set<int> busy_;                         // slots (or streams) with a turn handed over
  int outstanding_ = 0;                        // handed over and not yet back

  // Shared, under mutex_.
  std::mutex mutex_;
  std::condition_variable to_sender_;
  std::condition_variable to_worker_;
  std::deque<Ready> to_send_;
  std::deque<Ended> ended_;
  bool worker_done_ = false;
  bool closing_ = false;
  std::exception_ptr error_;
};

}  // namespace

void run_conversation_set(const std::vector<plan::PlannedCall>& turns, int slots, bool pin,
                          backend::Backend& be, http::ConcurrentTransport& transport,
                          const Clock& clock, const ConversationSetHooks& hooks) {
  if (turns.empty()) {
    return;
  }
  ConversationSet set(turns, slots, pin, be, transport, clock, hooks);
  set.run();
}

}  // namespace kvbench::run
