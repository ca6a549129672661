#include "harness/run/concurrent_block.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "harness/load/arrivals.h"
#include "harness/load/block_stats.h"
#include "harness/load/server_queue.h"
#include "harness/process/signals.h"
#include "harness/prompt/edit.h"

namespace kvbench::run {

namespace {

using nlohmann::json;

// Hands records to `write` on its own thread, in the order they were pushed. The destructor
// writes what is queued and joins.
class AsyncWriter {
 public:
  explicit AsyncWriter(std::function<void(const CallRecord&)> write)
      : write_(std::move(write)), thread_([this] { loop(); }) {}
  ~AsyncWriter() { close(); }
  AsyncWriter(const AsyncWriter&) = delete;
  AsyncWriter& operator=(const AsyncWriter&) = delete;

  void push(CallRecord r) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(r));
    }
    wake_.notify_one();
  }

  // Writes what is queued, ends the thread, and rethrows what could not be written.
  void finish() {
    close();
    rethrow_if_failed();
  }

  // Rethrows, on the calling thread, what the writer thread could not write (a full disk): from
  // then on it writes nothing more.
  void rethrow_if_failed() {
    if (failed_.load()) {
      const std::lock_guard<std::mutex> lock(mutex_);
      std::rethrow_exception(error_);
    }
  }

 private:
  void close() {
    if (!thread_.joinable()) {
      return;
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) {
        return;
      }
      CallRecord r = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        write_(r);
      } catch (...) {
        lock.lock();
        error_ = std::current_exception();
        failed_ = true;
        queue_.clear();
        return;
      }
      lock.lock();
    }
  }

  std::function<void(const CallRecord&)> write_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<CallRecord> queue_;
  bool closing_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

constexpr auto kMaxWait = std::chrono::milliseconds(50);

// The measurement loop of one block.
class Driver {
 public:
  Driver(std::vector<PreparedCall> calls, int slots, std::vector<double> arrivals_s,
         backend::Backend& be, http::ConcurrentTransport& multi, const Clock& clock,
         const ConcurrentHooks& hooks)
      : calls_(std::move(calls)),
        arrivals_s_(std::move(arrivals_s)),
        slot_ids_(static_cast<std::size_t>(slots)),
        be_(be),
        pin_slots_(be.capabilities().slot_pinning),
        clock_(clock),
        hooks_(hooks),
        multi_(multi) {
    for (int s = slots - 1; s >= 0; --s) {
      free_.push_back(s);
    }
    slot_ids_[0] = hooks.slot0_ids;
  }

  // Runs every call; returns the records in the order the calls ended.
  std::vector<CallRecord> run(AsyncWriter& writer) {
    writer_ = &writer;
    start_ = clock_.now();
    while (next_ < calls_.size() || multi_.in_flight() > 0) {
      writer.rethrow_if_failed();
      launch_due();
      multi_.poll(wait_time());
    }
    return std::move(done_);
  }

  int deferred() const { return deferred_; }

 private:
  bool open_loop() const { return !arrivals_s_.empty(); }

  Nanos due(std::size_t i) const {
    return start_ +
           std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(arrivals_s_[i]));
  }

  std::chrono::milliseconds wait_time() const {
    if (!open_loop() || next_ >= calls_.size() || free_.empty()) {
      return kMaxWait;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(due(next_) - clock_.now());
    return std::clamp(left, std::chrono::milliseconds(0), kMaxWait);
  }

  void launch_due() {
    if (process::stop_requested()) {
      next_ = calls_.size();  // interrupted: start no more; the calls in flight end aborted
      return;
    }
    while (next_ < calls_.size()) {
      if (open_loop() && clock_.now() < due(next_)) {
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
      launch(next_++);
    }
  }

  void launch(std::size_t i) {
    PreparedCall& p = calls_[i];
    const int stream = free_.back();
    free_.pop_back();
    p.record.stream = stream;
    p.record.in_flight = static_cast<int>(multi_.in_flight()) + 1;
    if (pin_slots_) {
      auto& slot = slot_ids_[static_cast<std::size_t>(stream)];
      p.spec.slot = stream;
      p.record.expected_cache_n = predicted_reuse(p, be_.capabilities().token_ids, &slot);
      slot = p.ids;
    } else {
      p.record.expected_cache_n = predicted_reuse(p, be_.capabilities().token_ids, nullptr);
    }
    const Nanos now = clock_.now();
    p.record.t_start_s = hooks_.elapsed_s(now);
    if (open_loop()) {
      p.record.queue_ms = std::chrono::duration<double, std::milli>(now - due(i)).count();
    }
    std::shared_ptr<backend::StreamDecoder> call_stream = be_.open_stream(p.spec);
    multi_.start(
        be_.stream_request(p.spec),
        [call_stream](std::string_view chunk, Nanos arrival) {
          return call_stream->feed(chunk, arrival);
        },
        [this, i, stream, call_stream](http::Result res) {
          PreparedCall& call = calls_[i];
          hooks_.finish(call, call_stream->finish(res));
          free_.push_back(stream);
          done_.push_back(call.record);
          writer_->push(std::move(call.record));
          launch_due();
        });
  }

  std::vector<PreparedCall> calls_;
  std::vector<double> arrivals_s_;  // empty: closed loop
  std::vector<std::vector<int>> slot_ids_;
  backend::Backend& be_;
  bool pin_slots_;
  const Clock& clock_;
  const ConcurrentHooks& hooks_;
  http::ConcurrentTransport& multi_;
  std::vector<int> free_;  // streams with no call in flight
  std::size_t next_ = 0;
  Nanos start_{0};
  int deferred_ = 0;
  bool counted_deferred_ = false;  // the waiting arrival was counted
  AsyncWriter* writer_ = nullptr;
  std::vector<CallRecord> done_;
};

}  // namespace

void run_concurrent_block(const plan::Block& block, const scenario::Concurrency& concurrency,
                          std::uint64_t seed, backend::Backend& be,
                          http::ConcurrentTransport& transport, const Clock& clock,
                          const ConcurrentHooks& hooks, results::BlockInfo& info) {
  info.slots = block.config.slots;
  std::vector<PreparedCall> ready;
  {
    AsyncWriter failures(hooks.write);
    for (const auto& call : block.calls) {
      if (hooks.skip(call.seq)) {
        continue;
      }
      PreparedCall p = hooks.prepare(call);
      if (p.ready) {
        ready.push_back(std::move(p));
      } else {
        failures.push(std::move(p.record));
      }
    }
    failures.finish();
  }
  std::vector<double> arrivals;
  if (concurrency.open_loop()) {
    arrivals = load::poisson_arrivals_s(
        seed * std::uint64_t{7919} + static_cast<std::uint64_t>(block.index),
        static_cast<int>(ready.size()), concurrency.rate_per_s);
  }
  Driver driver(std::move(ready), block.config.slots, std::move(arrivals), be, transport, clock,
                hooks);
  std::vector<CallRecord> records;
  {
    AsyncWriter writer(hooks.write);
    records = driver.run(writer);
    writer.finish();
  }
  if (concurrency.open_loop()) {
    info.detail["deferred"] = driver.deferred();
  }
  info.detail["concurrency"] = load::block_stats(records);
  if (be.capabilities().queue_in_durations) {
    info.detail["server_queue"] = load::server_queue(records);
  }
}

}  // namespace kvbench::run
