#include "harness/run/stream_lanes.h"

#include "harness/process/signals.h"

namespace kvbench::run {

std::optional<int> LockedSource::lane(const plan::PlannedCall& call) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return source_.lane(call);
}

PreparedCall LockedSource::prepare(const plan::PlannedCall& call) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return source_.prepare(call);
}

double LockedSource::wait_s(const plan::PlannedCall& call, Nanos now) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return source_.wait_s(call, now);
}

void LockedSource::waited(CallRecord& r, double ms) {
  const std::lock_guard<std::mutex> lock(mutex_);
  source_.waited(r, ms);
}

void LockedSource::released(const PreparedCall& p, const backend::CallResult& res) {
  const std::lock_guard<std::mutex> lock(mutex_);
  source_.released(p, res);
}

void LockedSource::expect(PreparedCall& p, std::optional<int> slot) {
  const std::lock_guard<std::mutex> lock(mutex_);
  source_.expect(p, slot);
}

void LockedSource::finish(PreparedCall& p, backend::CallResult res) {
  const std::lock_guard<std::mutex> lock(mutex_);
  source_.finish(p, std::move(res));
}

void Lanes::prepare_first() {
  for (auto& [lane, calls] : lanes_) {
    prepare_next(lane);
  }
}

void Lanes::prepare_next(int lane) {
  auto& calls = lanes_[lane];
  while (!calls.empty() && !process::stop_requested()) {
    const plan::PlannedCall call = calls.front();
    calls.pop_front();
    PreparedCall p = source_.prepare(call);
    if (!p.ready) {
      sink_.write(p.record);
      continue;
    }
    const Nanos now = clock_.now();
    const Nanos due = now + std::chrono::duration_cast<Nanos>(
                                std::chrono::duration<double>(source_.wait_s(call, now)));
    queued_[slot_key(lane)].push_back({std::move(p), due, lane});
    return;
  }
}

std::vector<LaneCall> Lanes::take_free() {
  std::vector<LaneCall> out;
  for (auto& [key, queue] : queued_) {
    if (queue.empty() || busy_.count(key) != 0) {
      continue;
    }
    out.push_back(std::move(queue.front()));
    queue.pop_front();
    source_.expect(out.back().p, pin_ ? std::optional<int>(key) : std::nullopt);
    busy_.insert(key);
  }
  return out;
}

}  // namespace kvbench::run
