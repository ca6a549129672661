#include "harness/load/capacity_search.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace kvbench::load {

bool level_passes(const LevelMeasurement& m, double limit_ms) {
  return m.not_ok == 0 && m.ttft_p90_ms.has_value() && *m.ttft_p90_ms < limit_ms;
}

namespace {

// Measures each level once and remembers the verdicts.
class Prober {
 public:
  Prober(double limit_ms, const std::function<LevelMeasurement(int)>& measure, CapacityResult& out)
      : limit_ms_(limit_ms), measure_(measure), out_(out) {}

  bool passes(int level) {
    if (const auto it = seen_.find(level); it != seen_.end()) {
      return it->second;
    }
    CapacityProbe p{level, measure_(level), false};
    p.passed = level_passes(p.measured, limit_ms_);
    out_.probes.push_back(p);
    seen_[level] = p.passed;
    if (!p.passed && (!out_.first_failed || level < *out_.first_failed)) {
      out_.first_failed = level;
    }
    return p.passed;
  }

 private:
  double limit_ms_;
  const std::function<LevelMeasurement(int)>& measure_;
  CapacityResult& out_;
  std::map<int, bool> seen_;
};

}  // namespace

CapacityResult search_capacity(int max_level, double limit_ms,
                               const std::function<LevelMeasurement(int level)>& measure) {
  if (max_level < 1) {
    throw std::invalid_argument("search_capacity: max_level must be at least 1");
  }
  CapacityResult out;
  Prober prober(limit_ms, measure, out);
  int good = 0;
  int bad = 0;
  for (int level = 1;; level = std::min(level * 2, max_level)) {
    if (!prober.passes(level)) {
      bad = level;
      break;
    }
    good = level;
    if (level == max_level) {
      break;
    }
  }
  while (bad > 0 && bad - good > 1) {
    const int mid = good + (bad - good) / 2;
    if (prober.passes(mid)) {
      good = mid;
    } else {
      bad = mid;
    }
  }
  out.answer = good;
  out.at_max = good == max_level;
  return out;
}

std::string describe_probe(const CapacityProbe& probe, double limit_ms) {
  const auto& m = probe.measured;
  if (m.not_ok > 0) {
    return fmt::format("failed: {} call{} not ok", m.not_ok, m.not_ok == 1 ? "" : "s");
  }
  if (!m.ttft_p90_ms) {
    return "failed: no TTFT measured";
  }
  return fmt::format("{}: p90 {:.1f} ms {} {:g} ms", probe.passed ? "passed" : "failed",
                     *m.ttft_p90_ms, probe.passed ? "<" : ">=", limit_ms);
}

}  // namespace kvbench::load
