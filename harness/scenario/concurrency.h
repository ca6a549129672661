#pragma once
// The concurrency of a scenario: how many conversations are in flight at once. Closed loop: each
// level of `streams` keeps that many calls in flight, a new call starting as one ends. Open loop:
// calls arrive at `rate_per_s` (Poisson, seeded), at most `max_in_flight` at once; an arrival
// that finds the cap reached waits (is deferred). Each level is a server block started with as
// many slots (-np) as calls can be in flight.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::scenario {

struct Concurrency {
  std::vector<int> streams{1};  // closed-loop levels
  double rate_per_s = 0;        // > 0: open loop (Poisson arrivals)
  int max_in_flight = 0;        // open loop: the cap
  bool open_loop() const { return rate_per_s > 0; }
  // The server slots of each block level: `streams`, or {max_in_flight} for the open loop.
  std::vector<int> slot_levels() const;
  // Anything but the default of one call at a time.
  bool active() const { return open_loop() || streams != std::vector<int>{1}; }
};

// A problem with its path ("concurrency.streams[1]") and what was expected.
using Problems = std::vector<std::pair<std::string, std::string>>;

// Parses the "concurrency" object: {"streams": [1, 4]} or {"rate_per_s": 2.5,
// "max_in_flight": 8}. Appends every problem found; `out` keeps its defaults where a field is bad.
void parse_concurrency(const nlohmann::json& v, Concurrency& out, Problems& problems);

// The object as it is written in a scenario.
nlohmann::json to_json(const Concurrency& c);

}  // namespace kvbench::scenario
