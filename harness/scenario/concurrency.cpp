#include "harness/scenario/concurrency.h"

#include <algorithm>

#include <fmt/format.h>

namespace kvbench::scenario {

namespace {

constexpr int kMaxStreams = 1024;

bool is_count(const nlohmann::json& v) {
  return v.is_number_integer() && v.get<long long>() >= 1 && v.get<long long>() <= kMaxStreams;
}

void parse_streams(const nlohmann::json& v, Concurrency& out, Problems& problems) {
  const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
  if (list.empty()) {
    problems.emplace_back("concurrency.streams", "expected a non-empty list of stream counts");
    return;
  }
  std::vector<int> streams;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path =
        v.is_array() ? fmt::format("concurrency.streams[{}]", i) : "concurrency.streams";
    if (!is_count(list[i])) {
      problems.emplace_back(path, fmt::format("expected an integer from 1 to {}, got {}",
                                              kMaxStreams, list[i].dump()));
    } else if (std::find(streams.begin(), streams.end(), list[i].get<int>()) != streams.end()) {
      problems.emplace_back(path, fmt::format("{} is listed twice", list[i].get<int>()));
    } else {
      streams.push_back(list[i].get<int>());
    }
  }
  if (streams.size() == list.size()) {
    out.streams = streams;
  }
}

void parse_open_loop(const nlohmann::json& v, Concurrency& out, Problems& problems) {
  const auto& rate = v["rate_per_s"];
  if (!rate.is_number() || rate.get<double>() <= 0 || rate.get<double>() > 10000) {
    problems.emplace_back(
        "concurrency.rate_per_s",
        fmt::format("expected arrivals per second in (0, 10000], got {}", rate.dump()));
  } else {
    out.rate_per_s = rate.get<double>();
  }
  if (!v.contains("max_in_flight")) {
    problems.emplace_back("concurrency.max_in_flight",
                          "missing: an arrival rate needs a cap on the calls in flight (the "
                          "server's slots)");
  } else if (!is_count(v["max_in_flight"])) {
    problems.emplace_back("concurrency.max_in_flight",
                          fmt::format("expected an integer from 1 to {}, got {}", kMaxStreams,
                                      v["max_in_flight"].dump()));
  } else {
    out.max_in_flight = v["max_in_flight"].get<int>();
  }
}

}  // namespace

std::vector<int> Concurrency::slot_levels() const {
  return open_loop() ? std::vector<int>{max_in_flight} : streams;
}

void parse_concurrency(const nlohmann::json& v, Concurrency& out, Problems& problems) {
  if (!v.is_object()) {
    problems.emplace_back("concurrency",
                          "expected an object like {\"streams\": [1, 4]} or {\"rate_per_s\": 2, "
                          "\"max_in_flight\": 8}");
    return;
  }
  for (const auto& [key, value] : v.items()) {
    if (key != "streams" && key != "rate_per_s" && key != "max_in_flight") {
      problems.emplace_back("concurrency." + key,
                            "unknown key (expected streams, or rate_per_s and max_in_flight)");
    }
  }
  if (v.contains("streams") && v.contains("rate_per_s")) {
    problems.emplace_back("concurrency",
                          "give either streams (closed loop) or rate_per_s (open loop), not both");
    return;
  }
  if (v.contains("streams")) {
    parse_streams(v["streams"], out, problems);
  } else if (v.contains("rate_per_s")) {
    parse_open_loop(v, out, problems);
  } else if (v.contains("max_in_flight")) {
    problems.emplace_back("concurrency.max_in_flight", "only meaningful with rate_per_s");
  }
}

nlohmann::json to_json(const Concurrency& c) {
  if (c.open_loop()) {
    return {{"rate_per_s", c.rate_per_s}, {"max_in_flight", c.max_in_flight}};
  }
  return {{"streams", c.streams}};
}

}  // namespace kvbench::scenario
