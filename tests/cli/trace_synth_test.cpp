// Synthetic traces: groups behind shared system prompts, read back as the Mooncake format, and
// reuse that collapses as the working set outgrows a block LRU.

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "harness/workloads/trace/reuse.h"
#include "harness/workloads/trace/synth.h"

namespace kvbench::workloads::trace {
namespace {

using ::testing::HasSubstr;

TEST(TraceSynth, ConversationsShareTheirGroupsSystemPromptAndTheirOwnHistory) {
  SynthOptions o;
  o.groups = 2;
  o.per_group = 2;
  o.system_tokens = 1024;
  o.question_tokens = 512;
  o.turns = 2;
  o.block_tokens = 512;
  const Trace t = synth_trace(o);
  ASSERT_EQ(t.requests.size(), 8u);
  for (const auto& r : t.requests) {
    EXPECT_EQ(r.blocks.size(), expected_blocks(t, r.input_tokens));
  }
  // Every request starts with one of two system prompts; a second turn extends its first.
  const auto reuse = infinite_reuse(t);
  int second_turns = 0;
  for (std::size_t i = 0; i < t.requests.size(); ++i) {
    if (t.requests[i].input_tokens == 2048) {  // system + two questions
      ++second_turns;
      EXPECT_EQ(reuse[i].blocks, 3) << i;  // its system prompt and its first question
    }
  }
  EXPECT_EQ(second_turns, 4);
  // Written and read back as a Mooncake trace, the same requests.
  std::stringstream text;
  write_mooncake(text, t);
  const Trace back = read_trace(text, Format::mooncake, "synth.jsonl", 512);
  ASSERT_EQ(back.requests.size(), t.requests.size());
  for (std::size_t i = 0; i < t.requests.size(); ++i) {
    EXPECT_EQ(back.requests[i].blocks, t.requests[i].blocks);
    EXPECT_EQ(back.requests[i].input_tokens, t.requests[i].input_tokens);
    EXPECT_DOUBLE_EQ(back.requests[i].due_ms, t.requests[i].due_ms);
  }
}

TEST(TraceSynth, ReuseCollapsesAsTheWorkingSetOutgrowsTheCapacity) {
  SynthOptions o;
  o.system_tokens = 2048;  // 4 blocks
  o.per_group = 4;
  o.turns = 2;
  o.capacity_blocks = 64;
  std::vector<double> rates;
  for (const double w : {0.5, 1.0, 2.0, 4.0}) {
    o.working_set = w;
    EXPECT_EQ(synth_groups(o), static_cast<int>(w * 64 / 4));
    const Trace t = synth_trace(o);
    rates.push_back(hit_rates(t, lru_reuse(t, 64)).blocks.rate);
  }
  const double fits = hit_rates(synth_trace(o), infinite_reuse(synth_trace(o))).blocks.rate;
  EXPECT_GT(fits, 0.6);
  for (std::size_t i = 1; i < rates.size(); ++i) {
    EXPECT_LT(rates[i], rates[i - 1]) << "working set " << i;
  }
  // Uniform groups at four times the capacity: a group is seldom drawn again before it is evicted.
  EXPECT_LT(rates.back(), 0.3 * rates.front()) << rates.front() << " " << rates.back();
}

TEST(TraceSynth, TheSameSeedGivesTheSameTrace) {
  SynthOptions o;
  o.zipf = 1.2;
  o.turns = 3;
  const Trace a = synth_trace(o);
  const Trace b = synth_trace(o);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].blocks, b.requests[i].blocks);
  }
  o.seed = 2;
  const Trace c = synth_trace(o);
  bool differs = false;
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    differs = differs || a.requests[i].blocks != c.requests[i].blocks;
  }
  EXPECT_TRUE(differs);
}

TEST(TraceSynth, BadOptionsNameTheOption) {
  SynthOptions o;
  o.working_set = 2;
  try {
    synth_trace(o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--capacity-blocks"));
  }
  o = {};
  o.per_group = 0;
  EXPECT_THROW(synth_trace(o), InputError);
}

}  // namespace
}  // namespace kvbench::workloads::trace
