// The arithmetic of answer agreement on hand-made token and probability lists: total variation of
// top-k lists, the first difference and the reference's margin there, the divergence before it,
// and the control that says whether the server is deterministic.

#include "harness/analysis/answers.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kvbench::analysis {
namespace {

using nlohmann::json;

double lp(double p) {
  return std::log(p);
}

TEST(AnswerAgreement, TotalVariationOfTopKLists) {
  const TopList a = {{1, lp(0.6)}, {2, lp(0.3)}};  // rest 0.1
  EXPECT_NEAR(top_k_total_variation(a, a), 0.0, 1e-12);
  // Same tokens, mass moved: |0.6-0.5| + |0.3-0.4| + rest |0.1-0.1| = 0.2, halved.
  const TopList b = {{1, lp(0.5)}, {2, lp(0.4)}};
  EXPECT_NEAR(top_k_total_variation(a, b), 0.1, 1e-12);
  // A token missing from one list counts 0 there; the rests are compared as one bucket:
  // |0.6-0.6| + |0.3-0| + |0-0.3| + |0.1-0.1| = 0.6, halved.
  const TopList c = {{1, lp(0.6)}, {3, lp(0.3)}};
  EXPECT_NEAR(top_k_total_variation(a, c), 0.3, 1e-12);
  // Nothing in common, no rest: 1.
  EXPECT_NEAR(top_k_total_variation({{1, 0.0}}, {{2, 0.0}}), 1.0, 1e-12);
  EXPECT_NEAR(top_k_total_variation(a, c), top_k_total_variation(c, a), 1e-12);
}

TEST(AnswerAgreement, FirstDifferenceMarginAndDivergenceBeforeIt) {
  const std::vector<int> ref = {5, 6, 7, 8};
  const std::vector<TopList> ref_top = {{{5, lp(0.9)}, {9, lp(0.05)}},
                                        {{6, lp(0.8)}, {9, lp(0.1)}},
                                        {{7, lp(0.55)}, {8, lp(0.45)}},
                                        {{8, lp(0.7)}, {1, lp(0.2)}}};
  const std::vector<TopList> other_top = {{{5, lp(0.9)}, {9, lp(0.05)}},
                                          {{6, lp(0.7)}, {9, lp(0.2)}},
                                          {{8, lp(0.5)}, {7, lp(0.5)}},
                                          {{1, lp(0.9)}}};
  const auto c = compare_answers(ref, ref_top, {5, 6, 8, 8}, other_top);
  EXPECT_EQ(c.positions, 4);
  EXPECT_EQ(c.identical, 3);
  ASSERT_TRUE(c.first_diff);
  EXPECT_EQ(*c.first_diff, 2);
  ASSERT_TRUE(c.margin);
  EXPECT_NEAR(*c.margin, 0.10, 1e-12) << "0.55 - 0.45, the reference's own top two";
  // Positions 0 and 1 only: 0 and 0.1 -> mean 0.05.
  ASSERT_TRUE(c.divergence);
  EXPECT_NEAR(*c.divergence, 0.05, 1e-12);

  const auto same = compare_answers(ref, ref_top, ref, ref_top);
  EXPECT_EQ(same.identical, 4);
  EXPECT_FALSE(same.first_diff);
  EXPECT_FALSE(same.margin);
  EXPECT_NEAR(*same.divergence, 0.0, 1e-12);

  const auto at_start = compare_answers(ref, ref_top, {1, 6, 7, 8}, other_top);
  EXPECT_EQ(*at_start.first_diff, 0);
  EXPECT_EQ(at_start.identical, 3) << "same tokens later still count";
  EXPECT_FALSE(at_start.divergence) << "no position before the first difference";

  const auto shorter = compare_answers(ref, ref_top, {5, 6}, other_top);
  EXPECT_EQ(*shorter.first_diff, 2) << "a missing token is a difference";
}

// A line of answers.jsonl as kvbench writes it, read back typed.
results::AnswerRecord line(int block, int start, const std::string& type, int prompt,
                           std::vector<int> ids) {
  json top = json::array();
  for (const int id : ids) {
    top.push_back(json::array({json::array({id, lp(0.6)}), json::array({id + 1, lp(0.3)})}));
  }
  return json{{"block", block},     {"replica", 0},    {"start", start},
              {"cache_type", type}, {"num_ctx", 1024}, {"variant", ""},
              {"prompt", prompt},   {"ids", ids},      {"top", top}}
      .get<results::AnswerRecord>();
}

TEST(AnswerAgreement, EachTypeAgainstTheReferenceWithTheControl) {
  std::vector<results::AnswerRecord> lines = {
      line(0, 1, "f16", 0, {1, 2, 3, 4}),  line(0, 1, "f16", 1, {5, 6, 7, 8}),
      line(0, 2, "f16", 0, {1, 2, 3, 4}),  line(0, 2, "f16", 1, {5, 6, 7, 8}),
      line(1, 1, "q4_0", 0, {1, 2, 3, 4}), line(1, 1, "q4_0", 1, {5, 9, 9, 9}),
  };
  auto r = analyze_answers(lines, "f16");
  ASSERT_TRUE(r.present);
  EXPECT_EQ(r.prompts, 2);
  EXPECT_TRUE(r.deterministic);
  ASSERT_EQ(r.types.size(), 1U);
  const auto& q = r.types[0];
  EXPECT_EQ(q.cache_type, "q4_0");
  EXPECT_EQ(q.prompts, 2);
  EXPECT_EQ(q.identical_answers, 1);
  EXPECT_NEAR(q.identical_share, (1.0 + 0.25) / 2, 1e-12);
  ASSERT_TRUE(q.mean_first_diff);
  EXPECT_NEAR(*q.mean_first_diff, 1.0, 1e-12);
  ASSERT_TRUE(q.mean_margin);
  EXPECT_NEAR(*q.mean_margin, 0.3, 1e-12);
  EXPECT_EQ(r.to_json()["types"][0]["identical_answers"], 1);

  // The second start differs once: not deterministic, and said so.
  lines[3] = line(0, 2, "f16", 1, {5, 6, 0, 8});
  r = analyze_answers(lines, "f16");
  EXPECT_FALSE(r.deterministic);
  ASSERT_EQ(r.controls.size(), 1U);
  EXPECT_EQ(r.controls[0].identical_answers, 1);

  // A failed answer is missing, not a difference; a later line for the same call wins.
  lines.push_back(json{
      {"block", 1},
      {"replica", 0},
      {"start", 1},
      {"cache_type", "q4_0"},
      {"num_ctx", 1024},
      {"variant", ""},
      {"prompt", 1},
      {"error",
       "timeout"}}.get<results::AnswerRecord>());
  r = analyze_answers(lines, "f16");
  EXPECT_EQ(r.types[0].prompts, 1);
  EXPECT_EQ(r.types[0].missing, 1);
  EXPECT_EQ(r.types[0].identical_answers, 1);

  // Without a second start there is no control.
  const auto none = analyze_answers({line(0, 1, "f16", 0, {1}), line(1, 1, "q8_0", 0, {1})}, "f16");
  EXPECT_TRUE(none.controls.empty());
  EXPECT_FALSE(none.deterministic);
}

// Text-only answers (Ollama): compared by bytes, with no margin or divergence.
TEST(AnswerAgreement, TextOnlyAnswersAreComparedByBytes) {
  const auto c = compare_texts("the cat sat", "the cap sat");
  EXPECT_EQ(c.positions, 11);
  EXPECT_EQ(c.identical, 10);
  EXPECT_EQ(*c.first_diff, 6);
  EXPECT_FALSE(c.margin);
  EXPECT_FALSE(c.divergence);
  EXPECT_FALSE(compare_texts("same", "same").first_diff);
  EXPECT_EQ(*compare_texts("same", "same and more").first_diff, 4);

  const auto text = [](int block, int start, const std::string& type, int prompt,
                       const std::string& t) {
    return json{{"block", block},  {"replica", 0},  {"start", start},   {"cache_type", type},
                {"num_ctx", 1024}, {"variant", ""}, {"prompt", prompt}, {"text", t}}
        .get<results::AnswerRecord>();
  };
  const auto r = analyze_answers({text(0, 1, "f16", 0, "a b c"), text(0, 2, "f16", 0, "a b c"),
                                  text(1, 1, "q8_0", 0, "a b d")},
                                 "f16");
  EXPECT_TRUE(r.deterministic);
  ASSERT_EQ(r.types.size(), 1U);
  EXPECT_TRUE(r.types[0].text_only);
  EXPECT_EQ(r.types[0].identical_answers, 0);
  EXPECT_NEAR(*r.types[0].mean_first_diff, 4.0, 1e-12);
  EXPECT_NEAR(r.types[0].identical_share, 0.8, 1e-12);
  EXPECT_FALSE(r.types[0].mean_margin);
  EXPECT_EQ(r.to_json()["types"][0]["text_only"], true);
}

}  // namespace
}  // namespace kvbench::analysis
