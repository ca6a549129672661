#include "harness/report/prefix.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/analysis/lesson_figures.h"

namespace kvbench::report {
namespace {

using namespace analysis;  // the statistics these printers print

using ::testing::HasSubstr;

// A read of `tokens` tokens of which `reused` came from the cache, at `ms_per_token`.
CallRecord read(int seq, int pair, const std::string& role, const std::string& position, int tokens,
                int reused, int expected, double ms_per_token = 1.0) {
  CallRecord r;
  r.seq = seq;
  r.kind = CallKind::timed;
  r.prompt_tokens = tokens;
  r.prompt_tokens_counted = tokens;
  r.pair_id = pair;
  r.pair_role = pair_role_from(role);
  r.edit_position = position;
  r.server.cache_n = reused;
  r.server.prompt_n = tokens - reused;
  r.server.prompt_ms = (tokens - reused) * ms_per_token;
  r.client.ttft_ms = (tokens - reused) * ms_per_token + 20.0;
  r.expected_cache_n = expected;
  return r;
}

// A pair at fraction f of a 1000-token prompt whose server reuses `reused` tokens.
void add_pair(std::vector<CallRecord>& calls, const std::string& position, int first_diff,
              int reused, double edited_ms_per_token = 1.0) {
  const int seq = static_cast<int>(calls.size());
  calls.push_back(read(seq, seq, "cold", position, 1000, 1, 1));
  auto edited = read(seq + 1, seq, "edited", position, 1000, reused, std::min(first_diff, 999),
                     edited_ms_per_token);
  edited.edit_first_diff = first_diff;
  calls.push_back(edited);
}

TEST(Prefix, PairsGiveRatiosAndThePrediction) {
  std::vector<CallRecord> calls;
  add_pair(calls, "0.25", 250, 250);
  const auto pairs = collect_pairs(calls);
  ASSERT_EQ(pairs.size(), 1U);
  EXPECT_EQ(pairs[0].pair_id, 0);
  EXPECT_DOUBLE_EQ(*pairs[0].prompt_ms_ratio, 750.0 / 999.0);
  EXPECT_DOUBLE_EQ(*pairs[0].ttft_ratio, 770.0 / 1019.0);
  EXPECT_DOUBLE_EQ(*pairs[0].expected_ratio, 750.0 / 999.0);
  EXPECT_EQ(*pairs[0].cold_tokens_reported, 1000);
  EXPECT_EQ(*pairs[0].edited_tokens_reported, 1000);
}

TEST(Prefix, IncompleteOrFailedPairsAreLeftOut) {
  std::vector<CallRecord> calls;
  add_pair(calls, "0.5", 500, 500);
  add_pair(calls, "0.5", 500, 500);
  calls[3].outcome = kvbench::Outcome::timeout;
  calls.push_back(read(4, 4, "cold", "0.5", 1000, 1, 1));  // its edited read never ran
  EXPECT_EQ(collect_pairs(calls).size(), 1U);
  const auto counts = count_pairs(calls);
  EXPECT_EQ(counts.planned, 3);
  EXPECT_EQ(counts.complete, 1);
}

TEST(Prefix, ReuseUpToTheFirstDifferenceIsConsistent) {
  std::vector<CallRecord> calls;
  for (int k = 0; k < 3; ++k) {
    add_pair(calls, "0.25", 250, 250);
    add_pair(calls, "0.75", 750, 750);
    add_pair(calls, "none", 1000, 999);
  }
  const auto rows = summarize_positions(collect_pairs(calls), lesson_figures());
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].edit_position, "0.25");
  EXPECT_EQ(rows[1].edit_position, "0.75");
  EXPECT_EQ(rows[2].edit_position, "none");
  EXPECT_DOUBLE_EQ(*rows[0].one_minus_f, 0.75);
  EXPECT_FALSE(rows[2].one_minus_f);
  EXPECT_EQ(rows[0].pairs, 3);
  EXPECT_EQ(rows[0].reuse_matched, 3);
  EXPECT_DOUBLE_EQ(*rows[0].first_diff_share, 0.25);
  EXPECT_DOUBLE_EQ(rows[0].prompt_ms_ci->lower, 750.0 / 999.0) << "identical pairs: a point CI";
  EXPECT_DOUBLE_EQ(*rows[0].lesson_ratio, 0.78);
  EXPECT_DOUBLE_EQ(*rows[1].lesson_ratio, 0.28);
  EXPECT_DOUBLE_EQ(*rows[2].lesson_ratio, 0.04 / 2.53);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.consistent) << r.edit_position << ": " << r.verdict;
    EXPECT_EQ(r.verdict, "consistent with prefix reuse up to the first difference");
  }
  EXPECT_THAT(overall_verdict(rows), HasSubstr("Consistent with prefix reuse up to the first"));
}

TEST(Prefix, NoReuseShorterReuseAndSlowTimeAreNamed) {
  std::vector<CallRecord> calls;
  add_pair(calls, "0.5", 500, 1);        // the server read the resend in full
  add_pair(calls, "0.25", 250, 100);     // reuse stopped early
  add_pair(calls, "0.75", 750, 750, 3);  // the right tokens, but three times slower per token
  const auto rows = summarize_positions(collect_pairs(calls), lesson_figures());
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].verdict,
            "reuse stopped before the first difference: the server reused 100 "
            "tokens of 250 shared");
  EXPECT_EQ(rows[1].verdict, "no prefix reuse: the resend was read in full");
  EXPECT_EQ(rows[2].verdict,
            "prefix reuse up to the first difference (cache_n exact), but the resend took 0.751 "
            "of the cold read, more than its share of tokens (0.250) and of the attention work "
            "(0.438): the machine was busy, or the resend was slowed otherwise");
  EXPECT_TRUE(rows[2].reuse_exact);
  EXPECT_FALSE(rows[0].reuse_exact);
  for (const auto& r : rows) {
    EXPECT_FALSE(r.consistent) << r.edit_position;
  }
  EXPECT_THAT(overall_verdict(rows), HasSubstr("Not consistent with prefix reuse up to the first "
                                               "difference at: 0.25 (reuse stopped"));
}

TEST(Prefix, ExactReuseWithASlowResendIsStillNamedPrefixReuse) {
  std::vector<CallRecord> calls;
  add_pair(calls, "0.25", 250, 250);
  add_pair(calls, "0.75", 750, 750, 2.5);  // 625 ms for 250 tokens: 0.63 of the cold read
  const auto rows = summarize_positions(collect_pairs(calls), lesson_figures());
  EXPECT_TRUE(rows[0].consistent);
  EXPECT_FALSE(rows[1].consistent) << "above even the attention share, 0.44";
  EXPECT_EQ(overall_verdict(rows),
            "Prefix reuse up to the first difference: the server's cache_n equalled the shared "
            "prefix in every pair. The time followed the prediction (within 0.1) except at 0.75, "
            "where the resend cost more (or less) than its share of tokens: see the rows.");
}

// Attention makes late tokens dearer: a resend of the last quarter may cost up to its share of
// the attention work, 1 - 0.75^2 = 0.44 of the cold read, and is still consistent.
TEST(Prefix, AResendBetweenItsTokenShareAndItsAttentionShareIsConsistent) {
  std::vector<CallRecord> calls;
  add_pair(calls, "0.75", 750, 750, 1.6);  // 400 ms for 250 tokens: 0.40 of the cold read
  const auto rows = summarize_positions(collect_pairs(calls), lesson_figures());
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_TRUE(rows[0].consistent);
  ASSERT_TRUE(rows[0].attention_ratio);
  EXPECT_NEAR(*rows[0].attention_ratio, 1 - 0.75 * 0.75, 0.001);
  EXPECT_EQ(rows[0].verdict,
            "consistent with prefix reuse up to the first difference; the resend took 0.400 of "
            "the cold read, between its share of tokens (0.250) and its share of the attention "
            "work (0.438): tokens late in a prompt cost more to read");
  EXPECT_THAT(overall_verdict(rows), HasSubstr("Consistent with prefix reuse"));
}

TEST(Prefix, MarkdownHasTheTableChecksVerdictAndPutLastLine) {
  std::vector<CallRecord> calls;
  add_pair(calls, "0.5", 500, 500);
  add_pair(calls, "timestamp_first", 12, 12);
  add_pair(calls, "timestamp_last", 990, 990);
  std::ostringstream out;
  write_prefix_markdown(out, prefix_report(calls, lesson_figures()));
  const std::string md = out.str();
  EXPECT_THAT(md, HasSubstr("## Prefix reuse: the edit-position experiment"));
  EXPECT_THAT(md, HasSubstr("3 of 3 pairs complete"));
  EXPECT_THAT(md, HasSubstr("| 1000 | 0.5 | 1 | 0.500 | 0.50 | 0.501 | 0.501 [0.501, 0.501] |"));
  EXPECT_THAT(md, HasSubstr("| 0.55 | 1 of 1 (500 of 500) | consistent with prefix reuse"));
  EXPECT_THAT(md, HasSubstr("in 3 of 3 pairs the edited read's cache_n equalled"));
  EXPECT_THAT(md, HasSubstr("the same for both reads in 3 of 3 pairs"));
  EXPECT_THAT(md, HasSubstr("Verdict: Consistent with prefix reuse up to the first difference"));
  // First: 988 tokens re-read, + 20 ms; last: 10 tokens, + 20 ms.
  EXPECT_THAT(md, HasSubstr("took a median 1008.0 ms to its first token"));
  EXPECT_THAT(md, HasSubstr("with the timestamp as the last line, 30.0 ms"));
  EXPECT_THAT(md, HasSubstr("saves 978.0 ms per call here (33.6x faster)"));
}

TEST(Prefix, TrapComparesCacheHitsWithColdReadsOfTheSameLength) {
  std::vector<CallRecord> calls;
  for (int i = 0; i < 4; ++i) {
    CallRecord r;
    r.seq = i;
    r.kind = CallKind::timed;
    r.prompt_tokens = 512;
    r.client.ttft_ms = i == 0 ? 800.0 : 20.0 + i;
    r.server.cache_n = i == 0 ? 1 : 511;
    if (i > 0) {
      r.flags = {"prompt_cache_hit"};
    }
    calls.push_back(r);
  }
  const auto trap = summarize_trap(calls);
  ASSERT_EQ(trap.size(), 1U);
  EXPECT_EQ(trap[0].hits, 3);
  EXPECT_EQ(trap[0].cold, 1);
  EXPECT_DOUBLE_EQ(*trap[0].hit_ttft_ms, 22.0);
  EXPECT_DOUBLE_EQ(*trap[0].speedup, 800.0 / 22.0);
  std::ostringstream out;
  write_prefix_markdown(out, prefix_report(calls, lesson_figures()));
  EXPECT_THAT(out.str(), HasSubstr("Repeated-prompt trap (512 tokens): 3 timed calls read their "
                                   "prompt from the cache"));
  EXPECT_THAT(out.str(), HasSubstr("looks 36.4x faster"));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("## Prefix reuse")));
}

// Ollama reports no reuse: a call whose prompt the call just before it (warm-up included) sent
// too found it in the server's one slot; a different prompt in between makes the next one cold.
TEST(Prefix, TrapWithoutReuseCountsFollowsTheCallBefore) {
  std::vector<CallRecord> calls;
  const std::vector<int> tokens = {1130, 1130, 1130, 64, 1130, 1130};
  const std::vector<double> ttft = {2500, 40, 44, 90, 2600, 42};
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    CallRecord r;
    r.seq = static_cast<int>(i);
    r.kind = i == 0 ? CallKind::warmup : CallKind::timed;
    r.prompt_tokens = tokens[i];
    r.nonce = "kvbench prompt of " + std::to_string(tokens[i]) + " tokens";
    r.client.ttft_ms = ttft[i];
    calls.push_back(r);
  }
  const auto trap = summarize_trap(calls);
  ASSERT_EQ(trap.size(), 1U);
  EXPECT_EQ(trap[0].prompt_tokens, 1130);
  EXPECT_EQ(trap[0].hits, 3);  // seq 1, 2 and 5
  EXPECT_EQ(trap[0].cold, 1);  // seq 4, after the 64-token call (the warm-up is not timed)
  EXPECT_DOUBLE_EQ(*trap[0].hit_ttft_ms, 42.0);
  EXPECT_DOUBLE_EQ(*trap[0].cold_ttft_ms, 2600.0);
}

TEST(Prefix, NothingToSayForAPlainRun) {
  CallRecord r;
  r.kind = CallKind::timed;
  r.client.ttft_ms = 100;
  std::ostringstream out;
  write_prefix_markdown(out, prefix_report({r}, lesson_figures()));
  EXPECT_EQ(out.str(), "");
}

TEST(Prefix, LessonFiguresComeFromTheDataFile) {
  const auto& f = lesson_figures();
  EXPECT_DOUBLE_EQ(f["prefix_reuse"]["edit_position"]["0.5"]["ratio"].get<double>(), 0.55);
  EXPECT_DOUBLE_EQ(f["prefix_reuse"]["edit_position"]["question"]["cold_s"].get<double>(), 14.35);
}

}  // namespace
}  // namespace kvbench::report
