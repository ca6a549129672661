// Prefix-reuse pairs on a server without token ids (Ollama): the edit is placed by text, keeps the
// prompt's length, and a resend the server counted differently from its cold read is flagged.

#include "harness/run/pair_prompt.h"

#include <gtest/gtest.h>

namespace kvbench::run {
namespace {

// A backend like Ollama's: a length-calibrated count (BOS plus one token per 4 bytes), no ids.
class TextOnlyBackend final : public backend::Backend {
 public:
  std::string_view name() const override { return "text-only"; }
  int count_tokens(std::string_view text) override {
    return 1 + static_cast<int>((text.size() + 3) / 4);
  }
  std::vector<int> tokenize(std::string_view /*text*/) override { return {}; }
  backend::CallResult complete(const backend::CompletionSpec& /*spec*/) override { return {}; }
  http::Request stream_request(const backend::CompletionSpec& /*spec*/) const override {
    return {};
  }
  std::unique_ptr<backend::StreamDecoder> open_stream(const backend::CompletionSpec&) override {
    return nullptr;
  }
  backend::Capabilities capabilities() const override { return {}; }
  backend::RenderedChat render_chat(const std::vector<backend::ChatMessage>&) override {
    return {};
  }
  nlohmann::json describe() override { return nlohmann::json::object(); }
};

plan::PlannedCall pair_call(int seq, plan::PairRole role, scenario::EditPosition edit) {
  plan::PlannedCall c;
  c.seq = seq;
  c.prompt_tokens = 400;
  c.pair = 10;
  c.role = role;
  c.edit = edit;
  return c;
}

struct Pair {
  PairPrompt cold, edited;
  CallRecord cold_record, edited_record;
};

Pair make_pair(PairPrompts& pairs, scenario::EditPosition edit) {
  TextOnlyBackend be;
  Pair p;
  p.cold = pairs.next(pair_call(10, plan::PairRole::cold, edit), p.cold_record, "AA run x call 10",
                      7, 1700000000, be);
  p.edited = pairs.next(pair_call(11, plan::PairRole::edited, edit), p.edited_record,
                        "BB run x call 11", 7, 1700000000, be);
  return p;
}

TEST(PairPromptsByText, WordEditKeepsTheLengthAndRecordsWhereItIs) {
  PairPrompts pairs;
  const auto p = make_pair(pairs, {scenario::EditPosition::Kind::fraction, 0.5});
  EXPECT_TRUE(p.cold.ids.empty());
  EXPECT_EQ(p.edited.built.text.size(), p.cold.built.text.size());
  EXPECT_NE(p.edited.built.text, p.cold.built.text);
  EXPECT_TRUE(p.edited.same_count);
  const auto& r = p.edited_record;
  EXPECT_EQ(r.nonce, "AA run x call 10") << "the resend keeps the cold read's first line";
  ASSERT_TRUE(r.edit_text_fraction && r.edit_first_diff);
  EXPECT_NEAR(*r.edit_text_fraction, 0.5, 0.02);
  EXPECT_NEAR(*r.edit_first_diff, 200, 4);
  EXPECT_EQ(r.pair_role, kvbench::PairRole::edited);
  EXPECT_EQ(r.edit_position, "0.5");
}

TEST(PairPromptsByText, SpecialLevelsChangeTheirLineOrNothing) {
  PairPrompts pairs;
  const auto q = make_pair(pairs, {scenario::EditPosition::Kind::question, 0});
  EXPECT_EQ(q.edited.built.text.size(), q.cold.built.text.size());
  EXPECT_EQ(q.edited_record.edit.rfind("'river' -> '", 0), 0U) << q.edited_record.edit;
  EXPECT_GT(*q.edited_record.edit_text_fraction, 0.95);
  const auto t = make_pair(pairs, {scenario::EditPosition::Kind::timestamp_first, 0});
  EXPECT_EQ(t.edited.built.text.size(), t.cold.built.text.size());
  EXPECT_LT(*t.edited_record.edit_text_fraction, 0.1);
  const auto n = make_pair(pairs, {scenario::EditPosition::Kind::none, 0});
  EXPECT_EQ(n.edited.built.text, n.cold.built.text);
  EXPECT_EQ(n.edited_record.edit, "unchanged");
  EXPECT_DOUBLE_EQ(*n.edited_record.edit_text_fraction, 1.0);
}

TEST(PairPromptsByText, ReportedCountsAreComparedAfterTheCalls) {
  const scenario::EditPosition half{scenario::EditPosition::Kind::fraction, 0.5};
  for (const int edited_count : {400, 401}) {
    PairPrompts pairs;
    auto p = make_pair(pairs, half);
    p.cold_record.server.prompt_n = 400;
    p.edited_record.server.prompt_n = edited_count;
    pairs.check_reported_count(pair_call(10, plan::PairRole::cold, half), p.cold_record);
    pairs.check_reported_count(pair_call(11, plan::PairRole::edited, half), p.edited_record);
    EXPECT_TRUE(p.cold_record.flags.empty());
    EXPECT_EQ(p.edited_record.flags, edited_count == 400
                                         ? std::vector<std::string>{}
                                         : std::vector<std::string>{"edit_changed_token_count"});
  }
}

}  // namespace
}  // namespace kvbench::run
