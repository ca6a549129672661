// The prefix-reuse analysis of pairs placed by text on a server that gives no token ids and no
// reused-token count (Ollama): the prediction comes from the estimated first difference, the
// reuse is inferred from time only, and nothing shows a misleading zero cache_n.

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/analysis/lesson_figures.h"
#include "harness/report/prefix.h"

namespace kvbench::report {
namespace {

using namespace analysis;  // the statistics these printers print

using ::testing::HasSubstr;
using ::testing::Not;

// A read of `tokens` tokens (all reported as prompt_eval_count) of which `read` took 1 ms each.
CallRecord ollama_read(int seq, int pair, const std::string& role, const std::string& position,
                       int tokens, int read_tokens) {
  CallRecord r;
  r.seq = seq;
  r.kind = CallKind::timed;
  r.prompt_tokens = tokens;
  r.pair_id = pair;
  r.pair_role = pair_role_from(role);
  r.edit_position = position;
  r.server.prompt_n = tokens;
  r.server.prompt_ms = read_tokens * 1.0;
  r.client.ttft_ms = read_tokens * 1.0 + 20.0;
  return r;
}

// A pair of 1000-token prompts edited at estimated token `first_diff` (byte share `share`),
// whose edited read took `edited_read` tokens' time and reported `edited_count` tokens.
void add_ollama_pair(std::vector<CallRecord>& calls, const std::string& position, int first_diff,
                     double share, int edited_read, int edited_count = 1000) {
  const int seq = static_cast<int>(calls.size());
  calls.push_back(ollama_read(seq, seq, "cold", position, 1000, 1000));
  auto edited = ollama_read(seq + 1, seq, "edited", position, edited_count, edited_read);
  edited.edit_first_diff = first_diff;
  edited.edit_text_fraction = share;
  calls.push_back(edited);
}

TEST(PrefixByText, PredictionComesFromTheEstimatedFirstDifference) {
  std::vector<CallRecord> calls;
  add_ollama_pair(calls, "0.25", 250, 0.2496, 760);
  add_ollama_pair(calls, "none", 1000, 1.0, 1);
  const auto pairs = collect_pairs(calls);
  ASSERT_EQ(pairs.size(), 2U);
  EXPECT_EQ(pairs[0].tokens, 1000);
  EXPECT_DOUBLE_EQ(*pairs[0].expected_ratio, 0.75);
  EXPECT_DOUBLE_EQ(*pairs[0].prompt_ms_ratio, 0.76);
  EXPECT_DOUBLE_EQ(*pairs[0].text_fraction, 0.2496);
  EXPECT_EQ(*pairs[0].cold_tokens_reported, 1000);
  EXPECT_EQ(*pairs[0].edited_tokens_reported, 1000);
  EXPECT_FALSE(pairs[0].cache_n);
  EXPECT_DOUBLE_EQ(*pairs[1].expected_ratio, 0.001) << "an unchanged resend re-reads one token";
}

TEST(PrefixByText, ConsistentTimesAreReuseInferredFromTimeOnly) {
  std::vector<CallRecord> calls;
  for (int k = 0; k < 3; ++k) {
    add_ollama_pair(calls, "0.25", 250, 0.25, 760);
    add_ollama_pair(calls, "0.75", 750, 0.75, 260);
  }
  const auto rows = summarize_positions(collect_pairs(calls), lesson_figures());
  ASSERT_EQ(rows.size(), 2U);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.reuse_inferred);
    EXPECT_TRUE(r.consistent) << r.verdict;
    EXPECT_FALSE(r.reuse_exact);
    EXPECT_EQ(r.reuse_checked, 0);
    EXPECT_EQ(r.verdict,
              "consistent with prefix reuse up to the first difference, inferred from time only "
              "(the server reports no reused-token count)");
  }
  EXPECT_DOUBLE_EQ(*rows[1].first_diff_share, 0.75);
  EXPECT_THAT(overall_verdict(rows),
              HasSubstr("Consistent with prefix reuse up to the first difference, inferred from "
                        "time only"));
}

TEST(PrefixByText, AFullReadOfTheResendIsNotConsistent) {
  std::vector<CallRecord> calls;
  add_ollama_pair(calls, "0.5", 500, 0.5, 1000);
  const auto rows = summarize_positions(collect_pairs(calls), lesson_figures());
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_FALSE(rows[0].consistent);
  EXPECT_EQ(rows[0].verdict,
            "the time ratio 1.000 is not the 0.500 that reuse up to the first difference predicts "
            "(the server reports no reused-token count)");
  EXPECT_THAT(overall_verdict(rows), HasSubstr("Not consistent with prefix reuse"));
}

TEST(PrefixByText, MarkdownSaysNotReportedInsteadOfZeros) {
  std::vector<CallRecord> calls;
  add_ollama_pair(calls, "0.5", 500, 0.4987, 500);
  add_ollama_pair(calls, "question", 990, 0.991, 10, 1001);  // the edit changed the count
  std::ostringstream out;
  write_prefix_markdown(out, prefix_report(calls, lesson_figures()));
  const std::string md = out.str();
  EXPECT_THAT(md, HasSubstr("## Prefix reuse: the edit-position experiment"));
  EXPECT_THAT(md, HasSubstr("| 0.500 [0.500, 0.500] | 0.510 [0.510, 0.510] | 0.55 | not reported "
                            "| consistent with prefix reuse up to the first difference, inferred "
                            "from time only"));
  EXPECT_THAT(md, HasSubstr("| 0 | 0.5 | 1000 | ~500 (0.499 of the text) | 1000.0 | 500.0 |"));
  EXPECT_THAT(md, HasSubstr("| not reported | not reported | 1000 / 1000 |"));
  EXPECT_THAT(md, HasSubstr("| not reported | not reported | 1000 / 1001 |"));
  EXPECT_THAT(md, HasSubstr("Reused tokens: not reported."));
  EXPECT_THAT(md, HasSubstr("reuse is inferred from time only"));
  EXPECT_THAT(md, HasSubstr("(prompt_eval_count): the same for both reads in 1 of 2 pairs"));
  EXPECT_THAT(md, Not(HasSubstr("0 of 0")));
  const auto j = prefix_to_json(prefix_report(calls, lesson_figures()));
  EXPECT_EQ(j["pairs"][0]["text_fraction"], 0.4987);
  EXPECT_EQ(j["pairs"][1]["tokens_reported_edited"], 1001);
  EXPECT_EQ(j["positions"][0]["reuse_inferred"], true);
}

}  // namespace
}  // namespace kvbench::report
