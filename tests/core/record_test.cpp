#include "harness/core/record.h"

#include <gtest/gtest.h>

namespace kvbench {
namespace {

using std::chrono::milliseconds;

TEST(DeriveTiming, FromScriptedTimestamps) {
  FakeClock clock(milliseconds(1000));
  CallTrace t;
  t.sent = clock.now();
  clock.advance(milliseconds(2));
  t.request_out = clock.now();
  clock.advance(milliseconds(38));
  t.first_byte = clock.now();
  clock.advance(milliseconds(210));  // first token at +250 ms
  for (int i = 0; i < 5; ++i) {
    t.token_arrivals.push_back(clock.now());
    t.token_counts.push_back(1);
    clock.advance(milliseconds(25));
  }
  t.done = clock.now();
  const auto d = derive_timing(t);
  ASSERT_TRUE(d.ttft_ms);
  EXPECT_DOUBLE_EQ(*d.ttft_ms, 250.0);
  EXPECT_DOUBLE_EQ(*d.first_byte_ms, 40.0);
  EXPECT_DOUBLE_EQ(*d.request_out_ms, 2.0);
  EXPECT_DOUBLE_EQ(*d.e2e_ms, 375.0);
  EXPECT_EQ(d.tokens, 5);
  // 4 tokens after the first over 100 ms.
  EXPECT_DOUBLE_EQ(*d.decode_tps, 40.0);
  EXPECT_EQ(d.token_ms, (std::vector<double>{250, 275, 300, 325, 350}));
}

TEST(DeriveTiming, EventsCarryingSeveralTokens) {
  CallTrace t;
  t.sent = Nanos(0);
  t.token_arrivals = {milliseconds(100), milliseconds(200)};
  t.token_counts = {3, 5};
  const auto d = derive_timing(t);
  EXPECT_EQ(d.tokens, 8);
  EXPECT_DOUBLE_EQ(*d.ttft_ms, 100.0);
  EXPECT_DOUBLE_EQ(*d.decode_tps, 50.0);  // 5 tokens after the first event in 100 ms
}

TEST(DeriveTiming, NoTokensNoTtftOneTokenNoRate) {
  CallTrace none;
  none.sent = Nanos(5);
  EXPECT_FALSE(derive_timing(none).ttft_ms);
  EXPECT_FALSE(derive_timing(none).first_byte_ms);
  EXPECT_FALSE(derive_timing(none).request_out_ms);  // never connected
  CallTrace one;
  one.token_arrivals = {milliseconds(7)};
  one.token_counts = {1};
  EXPECT_DOUBLE_EQ(*derive_timing(one).ttft_ms, 7.0);
  EXPECT_FALSE(derive_timing(one).decode_tps);
}

TEST(CallRecord, JsonRoundTrip) {
  CallRecord r;
  r.run_id = "abc";
  r.seq = 3;
  r.kind = kvbench::CallKind::timed;
  r.prompt_tokens = 256;
  r.num_ctx = 4096;
  r.cache_type = "q8_0";
  r.nonce = "AA run abc call 3";
  r.prompt_tokens_counted = 256;
  r.client.ttft_ms = 12.5;
  r.client.request_out_ms = 0.25;
  r.client.decode_tps = 40;
  r.client.tokens = 8;
  r.server.cache_n = 2;
  r.server.prompt_n = 254;
  r.server.raw = {{"cache_n", 2}, {"prompt_n", 254}};
  r.expected_cache_n = 2;
  r.flags = {"x"};
  r.http_status = 200;
  const auto back = record_from_json(to_json(r));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_FALSE(to_json(r)["server"].contains("prompt_ms")) << "absent stays absent";
}

}  // namespace
}  // namespace kvbench

namespace kvbench {
namespace {

// Record version 2 gives a turn's wait its own name: version 1 wrote it as queue_ms, which now
// means the open loop's queue alone; the reader takes both layouts.
TEST(RecordVersions, AVersion1TurnsQueueTimeReadsAsItsWait) {
  const auto v1 = nlohmann::json::parse(R"({"version": 1, "seq": 4, "queue_ms": 12.5,
      "conversation": {"conversation": 1, "turn": 2, "reuse": "on"}})");
  const CallRecord turn = record_from_json(v1);
  ASSERT_EQ(turn.part.key(), "conversation");
  EXPECT_EQ(turn.part.json()["wait_ms"], 12.5);
  EXPECT_FALSE(turn.queue_ms);
  // Written again, it is a version 2 record with the wait in the turn.
  CallRecord again = turn;
  again.version = kRecordVersion;
  const auto j = to_json(again);
  EXPECT_EQ(j["version"], 2);
  EXPECT_FALSE(j.contains("queue_ms"));
  EXPECT_EQ(j["conversation"]["wait_ms"], 12.5);
  EXPECT_EQ(record_from_json(j).part.json()["wait_ms"], 12.5);
  // An open loop's queue time stays queue_ms in both versions.
  const auto open = nlohmann::json::parse(R"({"version": 1, "seq": 5, "queue_ms": 3.0})");
  EXPECT_EQ(record_from_json(open).queue_ms, 3.0);
  auto v2 = open;
  v2["version"] = 2;
  EXPECT_EQ(record_from_json(v2).queue_ms, 3.0);
}

}  // namespace
}  // namespace kvbench
