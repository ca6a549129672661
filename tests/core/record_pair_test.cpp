// The pair fields of a call record: written only on pair calls, read back unchanged.

#include <gtest/gtest.h>

#include "harness/core/record.h"

namespace kvbench {
namespace {

TEST(RecordPair, PairFieldsRoundTrip) {
  CallRecord r;
  r.seq = 8;
  r.pair_id = 7;
  r.pair_role = kvbench::PairRole::edited;
  r.edit_position = "0.25";
  r.edit_first_diff = 512;
  r.edit = "'river' -> 'paper'";
  const auto j = to_json(r);
  EXPECT_EQ(j["pair"], nlohmann::json::parse(R"({"id": 7, "role": "edited",
      "edit_position": "0.25", "first_diff": 512, "edit": "'river' -> 'paper'"})"));
  const CallRecord back = record_from_json(j);
  EXPECT_EQ(back.pair_id, 7);
  EXPECT_EQ(back.pair_role, kvbench::PairRole::edited);
  EXPECT_EQ(back.edit_position, "0.25");
  EXPECT_EQ(back.edit_first_diff, 512);
  EXPECT_EQ(back.edit, "'river' -> 'paper'");
}

TEST(RecordPair, SingleCallsCarryNoPairObject) {
  CallRecord r;
  r.seq = 3;
  const auto j = to_json(r);
  EXPECT_FALSE(j.contains("pair"));
  const CallRecord back = record_from_json(j);
  EXPECT_FALSE(back.pair_id);
  EXPECT_EQ(back.pair_role, kvbench::PairRole::none);
  EXPECT_FALSE(back.edit_first_diff);
}

}  // namespace
}  // namespace kvbench

namespace kvbench {
namespace {

TEST(RecordVariant, VariantRoundTripsAndIsAbsentWhenEmpty) {
  CallRecord r;
  r.seq = 3;
  EXPECT_FALSE(to_json(r).contains("variant"));
  r.variant = "candidate";
  const auto j = to_json(r);
  EXPECT_EQ(j.at("variant"), "candidate");
  EXPECT_EQ(record_from_json(j).variant, "candidate");
}

}  // namespace
}  // namespace kvbench
