#include "harness/load/server_queue.h"

#include <algorithm>
#include <utility>

#include "harness/load/block_stats.h"
#include "harness/stats/descriptive.h"

namespace kvbench::load {

namespace {

double service_ms(const CallRecord& r) {
  return r.server.prompt_ms.value_or(0) + r.server.predicted_ms.value_or(0);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return stats::percentile_sorted(values, 0.5);
}

}  // namespace

int most_overlapping(const std::vector<std::pair<double, double>>& spans, double tolerance) {
  // Two spans overlap by more than `tolerance` exactly when the spans cut by half of it at each
  // end still overlap.
  std::vector<std::pair<double, int>> events;  // (time, +1 begin / -1 end)
  for (const auto& [begin, end] : spans) {
    const double b = begin + tolerance / 2;
    const double e = end - tolerance / 2;
    if (e > b) {
      events.emplace_back(b, 1);
      events.emplace_back(e, -1);
    }
  }
  // An end sorts before a begin at the same time: touching spans do not overlap.
  std::sort(events.begin(), events.end());
  int now = 0;
  int most = 0;
  for (const auto& [t, step] : events) {
    now += step;
    most = std::max(most, now);
  }
  return most;
}

results::ServerQueue server_queue(const std::vector<CallRecord>& records) {
  std::vector<const CallRecord*> ok;
  for (const auto& r : records) {
    if (r.ok() && r.client.e2e_ms) {
      ok.push_back(&r);
    }
  }
  std::vector<double> services;
  int timed = 0;
  int max_in_flight = 0;
  for (const auto* r : ok) {
    if (r->kind == CallKind::timed) {
      ++timed;
      services.push_back(service_ms(*r));
      max_in_flight = std::max(max_in_flight, r->in_flight.value_or(1));
    }
  }
  results::ServerQueue out{timed, std::nullopt};
  if (services.empty() || median(services) <= 0) {
    return out;
  }
  const double typical = median(services);
  std::vector<double> waits;
  std::vector<double> waited;
  std::vector<double> load_ms;
  std::vector<std::pair<double, double>> spans;
  for (const auto* r : ok) {
    const double end_ms = r->t_start_s * 1000 + *r->client.e2e_ms;
    spans.emplace_back(end_ms - service_ms(*r), end_ms);
    if (r->kind != CallKind::timed) {
      continue;
    }
    const double wait = std::max(0.0, *r->client.e2e_ms - service_ms(*r));
    waits.push_back(wait);
    if (wait >= typical / 2) {
      waited.push_back(wait);
    }
    const auto it = r->server.raw.find("load_duration");
    if (it != r->server.raw.end() && it->is_number()) {
      load_ms.push_back(it->get<double>() / 1e6);
    }
  }
  out.waits = results::ServerQueue::Waits{typical,
                                          waited.size(),
                                          max_in_flight,
                                          most_overlapping(spans, typical / 10),
                                          load_ms.size(),
                                          percentiles(std::move(waits)),
                                          percentiles(std::move(waited)),
                                          percentiles(std::move(load_ms))};
  return out;
}

}  // namespace kvbench::load
