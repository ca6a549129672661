#include "harness/load/server_queue.h"

#include <gtest/gtest.h>

namespace kvbench::load {
namespace {

// A call sent at `start_s` that ended `e2e_ms` later, on which the server spent 40 ms reading the
// prompt and `decode_ms` decoding.
CallRecord queued_call(double start_s, double e2e_ms, int in_flight, double decode_ms = 60) {
  CallRecord r;
  r.kind = kvbench::CallKind::timed;
  r.t_start_s = start_s;
  r.client.e2e_ms = e2e_ms;
  r.server.prompt_ms = 40;
  r.server.predicted_ms = decode_ms;
  r.in_flight = in_flight;
  return r;
}

TEST(MostOverlapping, CountsOnlyOverlapsLongerThanTheTolerance) {
  EXPECT_EQ(most_overlapping({}, 1), 0);
  EXPECT_EQ(most_overlapping({{0, 10}, {10, 20}}, 0), 1) << "touching spans do not overlap";
  EXPECT_EQ(most_overlapping({{0, 10}, {2, 8}, {5, 20}}, 0), 3);
  EXPECT_EQ(most_overlapping({{0, 10}, {9, 20}}, 2), 1) << "1 unit of overlap, tolerance 2";
  EXPECT_EQ(most_overlapping({{0, 10}, {7, 20}}, 2), 2);
  EXPECT_EQ(most_overlapping({{0, 1}, {0, 1}}, 2), 0) << "spans shorter than the tolerance";
}

TEST(ServerQueue, TwoSlotsFourCallsTwoWaitedAWholeCall) {
  // Four calls sent at once to a server with two slots, each served in 100 ms: the last two
  // start when the first two end.
  std::vector<CallRecord> rs = {queued_call(0.000, 101, 1), queued_call(0.000, 102, 2),
                                queued_call(0.001, 201, 3), queued_call(0.001, 202, 4)};
  rs[2].server.raw["load_duration"] = 100000000;
  rs[3].server.raw["load_duration"] = 101000000;
  CallRecord refused;
  refused.kind = kvbench::CallKind::timed;
  refused.outcome = kvbench::Outcome::http_error;
  refused.http_status = 503;
  refused.client.e2e_ms = 1;
  rs.push_back(refused);
  const nlohmann::json q = server_queue(rs);
  EXPECT_EQ(q["calls"], 4);
  EXPECT_DOUBLE_EQ(q["service_ms_p50"].get<double>(), 100.0);
  EXPECT_EQ(q["waited"], 2);
  EXPECT_EQ(q["wait_ms"]["n"], 4);
  EXPECT_DOUBLE_EQ(q["waited_ms"]["p50"].get<double>(), 101.5);  // waits of 101 and 102 ms
  EXPECT_EQ(q["max_in_flight"], 4);
  EXPECT_EQ(q["served_at_once"], 2);
  EXPECT_EQ(q["load_duration_reported"], 2);
  EXPECT_DOUBLE_EQ(q["load_duration_ms"]["p50"].get<double>(), 100.5);
}

TEST(ServerQueue, CallsServedTogetherWaitedForNothing) {
  const std::vector<CallRecord> rs = {queued_call(0.0, 103, 1), queued_call(0.0, 104, 2),
                                      queued_call(0.0, 102, 3)};
  const nlohmann::json q = server_queue(rs);
  EXPECT_EQ(q["waited"], 0);
  EXPECT_FALSE(q.contains("waited_ms"));
  EXPECT_EQ(q["served_at_once"], 3);
  EXPECT_EQ(q["load_duration_reported"], 0);
  EXPECT_FALSE(q.contains("load_duration_ms"));
}

TEST(ServerQueue, WarmUpCallsHoldASlotButAreNotCounted) {
  std::vector<CallRecord> rs = {queued_call(0.0, 101, 1), queued_call(0.0, 102, 2)};
  rs[0].kind = kvbench::CallKind::warmup;
  const nlohmann::json q = server_queue(rs);
  EXPECT_EQ(q["calls"], 1);
  EXPECT_EQ(q["served_at_once"], 2);
}

TEST(ServerQueue, WithoutServerDurationsOnlyCountsTheCalls) {
  CallRecord r;
  r.kind = kvbench::CallKind::timed;
  r.client.e2e_ms = 50;
  const nlohmann::json q = server_queue({r, r});
  EXPECT_EQ(q, nlohmann::json({{"calls", 2}}));
  EXPECT_EQ(nlohmann::json(server_queue({})), nlohmann::json({{"calls", 0}}));
}

}  // namespace
}  // namespace kvbench::load
