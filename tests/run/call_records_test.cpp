// The reuse predicted for a call: the shared prefix in the server's caching rule where token ids
// are known, none for a fresh read where the rule has a minimum, else nothing.

#include "harness/run/call_records.h"

#include <gtest/gtest.h>

namespace kvbench::run {
namespace {

PreparedCall call_with(std::vector<int> ids, bool fresh, scenario::CacheRule rule) {
  PreparedCall p;
  p.ids = std::move(ids);
  p.fresh = fresh;
  p.cache_rule = rule;
  return p;
}

std::vector<int> counting(int from, int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) {
    v.push_back(from + i);
  }
  return v;
}

TEST(PredictedReuse, SharedPrefixInTheServersSteps) {
  std::vector<int> slot = counting(0, 200);
  std::vector<int> prompt = counting(0, 150);
  prompt.push_back(9999);
  EXPECT_EQ(predicted_reuse(call_with(prompt, false, {}), true, &slot), 150);
  EXPECT_EQ(predicted_reuse(call_with(prompt, false, {0, 16}), true, &slot), 144);
  EXPECT_EQ(predicted_reuse(call_with(prompt, false, {1024, 128}), true, &slot), 0);
  // The same prompt again: all but the one token always read again.
  EXPECT_EQ(predicted_reuse(call_with(slot, false, {}), true, &slot), 199);
  // Token ids known but the slot a call lands in not known: only the fresh-read rule.
  EXPECT_FALSE(predicted_reuse(call_with(prompt, false, {}), true, nullptr));
}

TEST(PredictedReuse, WithoutTokenIdsOnlyAFreshReadUnderAMinimumIsPredicted) {
  const std::vector<int> slot = counting(0, 10);
  EXPECT_EQ(predicted_reuse(call_with({}, true, {1024, 128}), false, &slot), 0);
  EXPECT_EQ(predicted_reuse(call_with({}, true, {1024, 128}), false, nullptr), 0);
  EXPECT_FALSE(predicted_reuse(call_with({}, false, {1024, 128}), false, &slot))
      << "an edited resend shares an unknown number of tokens";
  EXPECT_FALSE(predicted_reuse(call_with({}, true, {0, 16}), false, &slot))
      << "no minimum: the template before the first line might be cached";
  EXPECT_FALSE(predicted_reuse(call_with({}, true, {}), false, &slot));
}

}  // namespace
}  // namespace kvbench::run
