// A workload's part of a planned call: the plan copies, compares, writes and lists it without
// knowing its type, and the workload reads it back as its own.

#include "harness/plan/call_part.h"

#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/core/record.h"

namespace kvbench::plan {
namespace {

struct Step {
  int n = 0;
  bool operator==(const Step&) const = default;
};
void write_part(const Step& s, nlohmann::json& call) {
  call["step"] = s.n;
}
std::string describe_part(const Step& s, int prompt_tokens) {
  return fmt::format("step {} of {} tokens", s.n, prompt_tokens);
}
void record_part(const Step& s, CallRecord& r) {
  r.stream = s.n;
}

struct Other {
  bool operator==(const Other&) const = default;
};
void write_part(const Other& /*o*/, nlohmann::json& /*call*/) {}
std::string describe_part(const Other& /*o*/, int /*prompt_tokens*/) {
  return "other";
}
void record_part(const Other& /*o*/, CallRecord& /*r*/) {}

TEST(CallPart, ThePlanCarriesAPartWithoutKnowingItsType) {
  const CallPart none;
  EXPECT_FALSE(none);
  EXPECT_EQ(none.as<Step>(), nullptr);
  EXPECT_EQ(none.describe(10), "");
  nlohmann::json call = {{"seq", 1}};
  none.write(call);
  EXPECT_EQ(call, (nlohmann::json{{"seq", 1}}));

  const CallPart step(Step{3});
  ASSERT_TRUE(step);
  ASSERT_NE(step.as<Step>(), nullptr);
  EXPECT_EQ(step.as<Step>()->n, 3);
  EXPECT_EQ(step.as<Other>(), nullptr) << "another workload's type reads as none";
  step.write(call);
  EXPECT_EQ(call, (nlohmann::json{{"seq", 1}, {"step", 3}}));
  EXPECT_EQ(step.describe(128), "step 3 of 128 tokens");
  CallRecord r;
  step.start_record(r);
  EXPECT_EQ(r.stream, 3);

  const CallPart copy = step;
  EXPECT_EQ(copy, step);
  EXPECT_EQ(copy.as<Step>()->n, 3);
  EXPECT_NE(CallPart(Step{4}), step);
  EXPECT_NE(CallPart(Other{}), step) << "parts of two types differ";
  EXPECT_NE(none, step);
  EXPECT_EQ(none, CallPart());
}

}  // namespace
}  // namespace kvbench::plan
