#include "harness/scenario/edit_position.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/scenario/scenario.h"

namespace kvbench::scenario {
namespace {

using ::testing::HasSubstr;
using Kind = EditPosition::Kind;

std::string position_error(const std::string& factors, const std::string& extra = "") {
  try {
    parse_scenario(
        R"({"name": "x", "factors": {"prompt_tokens": [256], )" + factors + "}" + extra + "}",
        "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << factors;
  return "";
}

TEST(EditPosition, FractionsAndSpecialLevelsParseAndRoundTrip) {
  const auto s = parse_scenario(
      R"({"name": "x", "factors": {"prompt_tokens": [256],
          "edit_position": [0, 0.25, 1, "none", "question", "timestamp_first", "timestamp_last"]}})",
      "s.json");
  const auto& e = s.factors.edit_position;
  ASSERT_EQ(e.size(), 7U);
  EXPECT_EQ(e[0], (EditPosition{Kind::fraction, 0.0}));
  EXPECT_EQ(e[1], (EditPosition{Kind::fraction, 0.25}));
  EXPECT_EQ(e[3].kind, Kind::none);
  EXPECT_EQ(e[4].kind, Kind::question);
  EXPECT_EQ(e[1].label(), "0.25");
  EXPECT_EQ(e[2].label(), "1");
  EXPECT_EQ(e[6].label(), "timestamp_last");
  for (const auto& level : e) {
    EXPECT_EQ(edit_position_from_label(level.label()), level) << level.label();
  }
  EXPECT_EQ(s.resolved["factors"]["edit_position"],
            nlohmann::json::parse(
                R"([0.0, 0.25, 1.0, "none", "question", "timestamp_first", "timestamp_last"])"));
  const auto again = parse_scenario(s.resolved.dump(), "resolved");
  EXPECT_EQ(again.factors.edit_position, e);
}

TEST(EditPosition, AbsentMeansNoPairsAndNoKeyInTheResolvedScenario) {
  const auto s = parse_scenario(R"({"name": "x", "factors": {"prompt_tokens": [256]}})", "s.json");
  EXPECT_TRUE(s.factors.edit_position.empty());
  EXPECT_FALSE(s.resolved["factors"].contains("edit_position"));
}

TEST(EditPosition, BadLevelsNameTheirPath) {
  EXPECT_THAT(position_error(R"("edit_position": [0.5, 1.5])"),
              HasSubstr("s.json:1: factors.edit_position[1]: 1.5 is out of range: expected a "
                        "fraction from 0 to 1"));
  EXPECT_THAT(position_error(R"("edit_position": ["middle"])"),
              HasSubstr("factors.edit_position[0]: expected a fraction from 0 to 1 or one of "
                        "\"none\", \"question\""));
  EXPECT_THAT(position_error(R"("edit_position": [0.5, 0.5])"),
              HasSubstr("factors.edit_position[1]: duplicate value 0.5"));
  EXPECT_THAT(position_error(R"("edit_position": -0.1)"),
              HasSubstr("factors.edit_position: -0.1 is out of range"));
}

TEST(EditPosition, PairsNeedAUniqueFirstLine) {
  EXPECT_THAT(position_error(R"("edit_position": [0.5])", R"(, "unique_first_line": false)"),
              HasSubstr("factors.edit_position: the cold read of each pair needs a unique first "
                        "line"));
}

}  // namespace
}  // namespace kvbench::scenario
