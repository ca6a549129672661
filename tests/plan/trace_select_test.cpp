#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/workloads/trace/reuse.h"
#include "harness/workloads/trace/select.h"

namespace kvbench::workloads::trace {
namespace {

using ::testing::HasSubstr;

const std::string kTraceDir = std::string(KVBENCH_TEST_DATA) + "/traces/";

// Requests named by origin: families {1 2} (a, c, f) and {5 6} (b, e), a family of one {8 9} (d)
// and a request of one block (g), which is in no family.
Trace family_trace() {
  Trace t;
  t.block_tokens = 4;
  const auto add = [&](std::vector<std::uint64_t> blocks, const char* name) {
    Request r;
    r.due_ms = 100.0 * static_cast<double>(t.requests.size());
    r.input_tokens = static_cast<int>(blocks.size()) * 4;
    r.output_tokens = 1;
    r.blocks = std::move(blocks);
    r.origin = name;
    t.requests.push_back(r);
  };
  add({1, 2, 3}, "a");
  add({5, 6}, "b");
  add({1, 2}, "c");
  add({8, 9}, "d");
  add({5, 6, 7}, "e");
  add({1, 2, 4}, "f");
  add({3}, "g");
  return t;
}

std::string origins(const Trace& t) {
  std::string out;
  for (const auto& r : t.requests) {
    out += r.origin;
  }
  return out;
}

TEST(TraceWindow, TakesConsecutiveRequests) {
  EXPECT_EQ(origins(take_window(family_trace(), {2, 3})), "cde");
  EXPECT_EQ(origins(take_window(family_trace(), {5, std::nullopt})), "fg");
  EXPECT_EQ(origins(take_window(family_trace(), {})), "abcdefg");
}

TEST(TraceWindow, PastTheEndIsAnError) {
  EXPECT_THROW(take_window(family_trace(), {7, std::nullopt}), InputError);
  try {
    take_window(family_trace(), {5, 3});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("expected 1 to 2"));
  }
}

TEST(TraceSample, KeepsWholeFamiliesOfTwoOrMoreInTraceOrder) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    EXPECT_EQ(origins(sample_families(family_trace(), {2, seed})), "abcef") << seed;
  }
  std::set<std::string> picked;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    picked.insert(origins(sample_families(family_trace(), {1, seed})));
  }
  EXPECT_EQ(picked, (std::set<std::string>{"acf", "be"}));
}

TEST(TraceSample, MoreFamiliesThanTheTraceHasIsAnError) {
  try {
    sample_families(family_trace(), {3, 1});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("expected 1 to 2"));
  }
}

TEST(TraceSample, ConversationTraceSampleIsSeededAndKeepsReuse) {
  const Trace full =
      read_trace_file(kTraceDir + "mooncake-conversation.jsonl.xz", Format::mooncake);
  const Trace a = sample_families(full, {20, 1});
  EXPECT_EQ(origins(a), origins(sample_families(full, {20, 1})));
  EXPECT_NE(origins(a), origins(sample_families(full, {20, 2})));
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> in_sample;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> in_full;
  for (const auto& r : a.requests) {
    ++in_sample[*family_key(r)];
  }
  for (const auto& r : full.requests) {
    if (const auto key = family_key(r); key && in_sample.count(*key) != 0) {
      ++in_full[*key];
    }
  }
  EXPECT_EQ(in_sample.size(), 20U);
  EXPECT_EQ(in_sample, in_full);  // every request of a picked family, none other
  for (const auto& [key, n] : in_sample) {
    EXPECT_GE(n, 2U);
  }
  for (std::size_t i = 1; i < a.requests.size(); ++i) {
    ASSERT_LE(a.requests[i - 1].due_ms, a.requests[i].due_ms);
  }
  // The first 200 requests reuse 5.9 % of their tokens; whole families keep far more.
  const Trace window = take_window(full, {0, 200});
  EXPECT_NEAR(hit_rates(window, infinite_reuse(window)).tokens.rate, 0.059, 0.0005);
  EXPECT_GT(hit_rates(a, infinite_reuse(a)).tokens.rate, 0.2);
}

TEST(TraceScale, MooncakeLengthsKeepTheirBlockCounts) {
  Trace t;  // 512-token blocks, the last one partial
  const auto add = [&](double due_ms, int input, int output, std::size_t blocks) {
    Request r;
    r.due_ms = due_ms;
    r.input_tokens = input;
    r.output_tokens = output;
    r.blocks.resize(blocks);
    t.requests.push_back(r);
  };
  add(1000, 6758, 500, 14);  // 13 whole blocks and a last block of 102 tokens
  add(1500, 1024, 3, 2);     // a full last block
  add(4000, 1, 0, 1);        // a last block of one token
  const Trace s = scale_trace(t, {0.0625, 10});
  EXPECT_EQ(s.block_tokens, 32);
  // 13 x 32 + round(102 x 0.0625 = 6.375); 32 + round(32); 0 + max(1, round(0.0625)).
  EXPECT_EQ(s.requests[0].input_tokens, 422);
  EXPECT_EQ(s.requests[1].input_tokens, 64);
  EXPECT_EQ(s.requests[2].input_tokens, 1);
  // round(31.25); max(1, round(0.1875)); max(1, 0).
  EXPECT_EQ(s.requests[0].output_tokens, 31);
  EXPECT_EQ(s.requests[1].output_tokens, 1);
  EXPECT_EQ(s.requests[2].output_tokens, 1);
  // Gaps of 500 and 2500 ms, divided by 10, from the first request's arrival.
  EXPECT_DOUBLE_EQ(s.requests[0].due_ms, 0);
  EXPECT_DOUBLE_EQ(s.requests[1].due_ms, 50);
  EXPECT_DOUBLE_EQ(s.requests[2].due_ms, 300);
  for (const auto& r : s.requests) {
    EXPECT_EQ(expected_blocks(s, r.input_tokens), r.blocks.size());
  }
}

TEST(TraceScale, WekaTailStaysBelowOneScaledBlock) {
  const Trace t = read_trace_file(kTraceDir + "weka-fixture.json", Format::weka);
  const Trace s = scale_trace(t, {0.0625, 1});
  EXPECT_EQ(s.block_tokens, 4);
  // in 200 = 3 x 64 + 8: 3 x 4 + round(0.5) = 13; in 130 = 2 x 64 + 2: 8 + round(0.125) = 8.
  EXPECT_EQ(s.requests[0].input_tokens, 13);
  EXPECT_EQ(s.requests[2].input_tokens, 8);
  Trace wide = t;
  wide.requests[0].input_tokens = 255;  // a tail of 63: round(3.94) = 4 is cut to 3
  EXPECT_EQ(scale_trace(wide, {0.0625, 1}).requests[0].input_tokens, 15);
  for (const auto& r : s.requests) {
    EXPECT_EQ(expected_blocks(s, r.input_tokens), r.blocks.size());
  }
}

TEST(TraceScale, UnitScaleKeepsLengthsAndNonPositiveScalesAreErrors) {
  const Trace t = read_trace_file(kTraceDir + "bailian-fixture.jsonl", Format::bailian);
  const Trace s = scale_trace(t, {});
  for (std::size_t i = 0; i < t.requests.size(); ++i) {
    EXPECT_EQ(s.requests[i].input_tokens, t.requests[i].input_tokens);
    EXPECT_EQ(s.requests[i].output_tokens, t.requests[i].output_tokens);
    EXPECT_EQ(s.requests[i].due_ms, t.requests[i].due_ms);
  }
  EXPECT_THROW(scale_trace(t, {0, 1}), InputError);
  EXPECT_THROW(scale_trace(t, {1, -2}), InputError);
}

}  // namespace
}  // namespace kvbench::workloads::trace
