// Greedy answers from llama-server's /completion: the request asks for token ids and top-k
// log-probabilities with the prompt read afresh; the response's lists are read and checked.

#include "harness/backend/answer.h"

#include <gtest/gtest.h>

#include "tests/support/scripted_transport.h"

namespace kvbench::backend {
namespace {

using nlohmann::json;

TEST(Answer, RequestIsGreedyFreshAndAsksForIdsAndProbabilities) {
  const json b = answer_body("hello", {32, 5, 7});
  EXPECT_EQ(b["prompt"], "hello");
  EXPECT_EQ(b["n_predict"], 32);
  EXPECT_EQ(b["n_probs"], 5);
  EXPECT_EQ(b["temperature"], 0.0);
  EXPECT_EQ(b["seed"], 7);
  EXPECT_EQ(b["return_tokens"], true);
  EXPECT_EQ(b["cache_prompt"], false);
  EXPECT_EQ(b["stream"], false);
}

TEST(Answer, IdsAndTopListsAreReadAndChecked) {
  // As the installed llama-server answers (build 11669).
  const json body = json::parse(R"({"content": " v bes", "tokens": [376, 356],
    "completion_probabilities": [
      {"id": 376, "token": " v", "logprob": -5.81,
       "top_logprobs": [{"id": 376, "token": " v", "logprob": -5.81},
                        {"id": 351, "token": "ent", "logprob": -5.85}]},
      {"id": 356, "token": " bes", "logprob": -5.7,
       "top_logprobs": [{"id": 356, "logprob": -5.7}]}]})");
  const Answer a = parse_answer(body);
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(a.ids, (std::vector<int>{376, 356}));
  ASSERT_EQ(a.top.size(), 2U);
  ASSERT_EQ(a.top[0].size(), 2U);
  EXPECT_EQ(a.top[0][1].first, 351);
  EXPECT_DOUBLE_EQ(a.top[0][1].second, -5.85);
  EXPECT_FALSE(parse_answer(json::parse(R"({"content": "x"})")).ok());
  EXPECT_FALSE(parse_answer(json::parse(R"({"tokens": [1]})")).ok());
  EXPECT_FALSE(
      parse_answer(json::parse(R"({"tokens": [1, 2], "completion_probabilities": [{}]})")).ok())
      << "lists of different lengths";
  EXPECT_FALSE(
      parse_answer(json::parse(R"({"tokens": ["a"], "completion_probabilities": []})")).ok());
}

TEST(Answer, FetchPostsToCompletionAndNeverThrows) {
  test_support::ScriptedTransport tr;
  tr.fetch_body = R"({"tokens": [3], "completion_probabilities": [{"top_logprobs": []}]})";
  const Answer a = fetch_answer(tr, "http://h:1", "k", "p", {});
  EXPECT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(tr.last.url, "http://h:1/completion");
  tr.fetch_body = "not json";
  EXPECT_FALSE(fetch_answer(tr, "http://h:1", "", "p", {}).ok());
}

}  // namespace
}  // namespace kvbench::backend
